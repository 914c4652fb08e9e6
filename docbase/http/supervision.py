"""The worker processes of ``docbase serve``: uvicorn's supervisor over one socket.

The main process binds the port, writes the pid file and runs uvicorn's
``Multiprocess`` supervisor; workers are spawned processes that each build the app from
the deployment in their environment (``docbase.http.worker.worker_app``).

A worker never outlives its supervisor (:func:`exit_with_supervisor`): killed with
SIGKILL, the main process cannot stop its workers, which would go on serving, and
holding the port, as orphans.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import signal
import socket
import ssl
import sys
import threading
import time
from multiprocessing import resource_tracker
from pathlib import Path

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess
from uvicorn.supervisors.multiprocess import Process
from uvicorn.supervisors.multiprocess import logger as uvicorn_logger

from docbase.http.logs import announce

WORKER_HEALTHCHECK_SECONDS = 60
"""Seconds a worker may take to answer the supervisor, starting up included: on a loaded
machine a worker takes seconds to import, and uvicorn's 5 s default had the supervisor
kill it, and abort a SIGHUP restart, before it served."""


TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"
"""The TLS 1.2 cipher suites offered: forward secret (ECDHE) and AEAD only. TLS 1.3's
suites are all of that kind already."""


SUPERVISOR_ENV = "DOCBASE_SUPERVISOR_PID"
"""The environment variable that tells a worker its supervisor's process id."""
WATCH_INTERVAL = 0.5
"""Seconds between two looks of a worker at its parent's process id."""
EXIT_SLACK = 5.0
"""Seconds a worker whose supervisor died gets beyond the graceful shutdown's bound
(application shutdown included) before it exits at once."""
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
HEALTHCHECK_SLICE = 0.25
"""Seconds between two looks, while the supervisor waits for a worker's answer to its
health check, at whether the worker still lives and a signal has come."""
SIGNAL_LOOK = 0.05
"""Seconds between two looks of the idle supervisor at whether a signal has come. uvicorn
looks every 0.5 s, so a SIGTERM waited 0.25 s on average before the workers heard of it
(each stop of a test's server, each restart by an operator's service manager)."""

WORKER_MALLOC_ARENAS = "2"
"""glibc's malloc arenas per worker (``MALLOC_ARENA_MAX``) unless the environment sets
it: by default glibc gives each thread that allocates an arena of its own, up to eight
per core, and an arena keeps what it once held, so a worker's SQL threads each held
~1 MiB after a load (``docs/benchmarks.md``, branch ``memory``)."""

logger = logging.getLogger("docbase.serve")


def exit_with_supervisor(graceful_timeout: float) -> None:
    """In a worker: stop gracefully once the supervisor is gone, and exit for sure.

    On Linux the kernel sends SIGTERM the moment the parent dies
    (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread also looks every
    :data:`WATCH_INTERVAL` seconds whether the parent is still the supervisor named in
    :data:`SUPERVISOR_ENV` (an orphan is adopted by another process), and if not sends
    SIGTERM itself, which stops uvicorn's server as the supervisor would: no new
    connections, in-flight requests get ``graceful_timeout``. Should the worker still
    run :data:`EXIT_SLACK` seconds after that, it exits at once, abandoning what is left.
    """
    expected = int(os.environ.get(SUPERVISOR_ENV) or os.getppid())
    _parent_death_signal(signal.SIGTERM)
    threading.Thread(target=_watch, args=(expected, graceful_timeout),
                     name="docbase-supervisor-watch", daemon=True).start()


def _parent_death_signal(sig: signal.Signals) -> bool:
    """Ask Linux to send ``sig`` when the parent dies; False where that cannot be."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    return False


def _watch(supervisor: int, graceful_timeout: float) -> None:
    # checked at once too: the supervisor may have died before prctl above
    while os.getppid() == supervisor:
        time.sleep(WATCH_INTERVAL)
    logger.warning("the supervisor (process %s) is gone: worker %s stops", supervisor,
                   os.getpid())
    os.kill(os.getpid(), signal.SIGTERM)  # a second SIGTERM is harmless to uvicorn
    time.sleep(graceful_timeout + EXIT_SLACK)
    logger.error("worker %s still running %.0f s after its supervisor died: exiting now",
                 os.getpid(), graceful_timeout + EXIT_SLACK)
    os._exit(1)


def without_resource_tracker() -> None:
    """Spawn the workers without multiprocessing's resource tracker process.

    Before the first spawned child, multiprocessing starts a resource tracker: one more
    Python process (~13 MiB) that unlinks the named semaphores and shared memory
    segments its children leave behind when they die. docbase's workers make none
    (uvicorn talks to them through pipes, the metrics are memory-mapped files in a
    directory :func:`docbase.http.launch.metrics_directory` removes), so the tracker's
    descriptor, which the workers inherit, is ``/dev/null``: what a worker would report
    to it is dropped. Where multiprocessing has no such tracker, or it already runs,
    nothing changes.
    """
    if os.name != "posix":
        return
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is not None and getattr(tracker, "_fd", 0) is None:
        tracker._fd = os.open(os.devnull, os.O_WRONLY)


class TlsConfig(uvicorn.Config):
    """uvicorn's configuration: TLS 1.2 at least, and the ``header_timeout`` to apply.

    :class:`~docbase.http.coalescing.CoalescingHttpProtocol` reads ``header_timeout``.
    """

    header_timeout: float | None = None

    def load(self) -> None:
        """Load as uvicorn does, then refuse TLS versions below 1.2."""
        super().load()
        if self.ssl is not None:
            self.ssl.minimum_version = ssl.TLSVersion.TLSv1_2


class UvicornRunner:
    """uvicorn's worker supervisor over one listening socket owned by this process.

    The workers (``deployment.workers``, even one) are processes of their own, so that
    SIGHUP replaces each in turn (the new one serving before the old one stops) and a
    crashed one is respawned; SIGTERM/SIGINT stop them gracefully.
    """

    def __init__(self, config: uvicorn.Config, url: str, pid_file: Path | None, *,
                 log_format: str = "text") -> None:
        self.config = config
        self.url = url
        self.pid_file = pid_file
        self.log_format = log_format

    def serve(self) -> None:
        """Serve until SIGTERM/SIGINT, then stop gracefully."""
        config = self.config
        sock = config.bind_socket()
        announce(f"docbase: Listening at: {self.url}", self.log_format)
        if self.pid_file is not None:
            self.pid_file.write_text(f"{os.getpid()}\n")
        os.environ[SUPERVISOR_ENV] = str(os.getpid())  # inherited by every worker
        os.environ.setdefault("MALLOC_ARENA_MAX", WORKER_MALLOC_ARENAS)
        without_resource_tracker()
        try:
            WatchfulMultiprocess(config, sockets=[sock]).run()
        finally:
            sock.close()
            if self.pid_file is not None:
                self.pid_file.unlink(missing_ok=True)
        announce("docbase: shutdown completed", self.log_format)


class WatchfulMultiprocess(Multiprocess):
    """uvicorn's supervisor, whose health check notices a worker that dies meanwhile.

    uvicorn's supervisor pings each worker and waits for the answer up to
    ``timeout_worker_healthcheck`` (:data:`WORKER_HEALTHCHECK_SECONDS`) in one call. It
    holds both ends of the pipe, so a worker killed after the ping (SIGKILL, the OOM
    killer) never closes it: the supervisor went on waiting the whole minute, neither
    respawning the worker nor acting on SIGTERM. Here the wait is cut into slices of
    :data:`HEALTHCHECK_SLICE` seconds; after each the supervisor looks whether the
    worker still lives (it died: respawn it now) and whether a signal came (answer it
    first; the worker is checked again on the next round).
    """

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        self.should_exit = SignalWatchingEvent(self.signal_queue)

    def keep_subprocess_alive(self) -> None:
        """Respawn each worker that died or did not answer in time, as uvicorn does."""
        for index, process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            if self._answers(process):
                continue
            process.kill()  # hung, or dead already
            process.join()
            if process.exitcode == STARTUP_FAILURE:  # broken app, TLS or socket
                logger.error("worker %s failed to start: the supervisor stops", process.pid)
                self.should_exit.set()
                return
            uvicorn_logger.info("Child process [%s] died", process.pid)  # uvicorn's words
            replacement = Process(self.config, self.sockets)
            replacement.start()
            self.processes[index] = replacement

    def _answers(self, process: Process) -> bool:
        """Whether ``process`` lives and answers a ping within the health-check timeout.

        A signal that comes before the answer counts as one, for now: the supervisor
        acts on the signal and checks the worker on its next round.
        """
        if not process.process.is_alive():
            return False
        deadline = time.monotonic() + self.config.timeout_worker_healthcheck
        try:
            process.parent_conn.send(b"ping")
            while not process.parent_conn.poll(HEALTHCHECK_SLICE):
                if not process.process.is_alive() or time.monotonic() >= deadline:
                    return False
                if self.signal_queue:
                    return True
            process.parent_conn.recv()
        except (OSError, EOFError, pickle.UnpicklingError):
            return False
        return True


class SignalWatchingEvent(threading.Event):
    """The supervisor's ``should_exit``, whose timed wait ends once a signal is queued.

    uvicorn's loop waits on ``should_exit`` for 0.5 s between two rounds of handling the
    queued signals; here that wait ends within :data:`SIGNAL_LOOK` of a signal. The
    signal handler itself only appends to the queue (setting an event there could
    deadlock on the lock the interrupted wait holds).
    """

    def __init__(self, signals: list[int]) -> None:
        super().__init__()
        self._signals = signals

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until set, ``timeout`` passes or a signal is queued; return whether set."""
        if timeout is None:
            return super().wait()
        deadline = time.monotonic() + timeout
        while not self._signals:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if super().wait(min(SIGNAL_LOOK, remaining)):
                return True
        return self.is_set()
