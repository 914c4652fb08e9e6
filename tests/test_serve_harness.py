"""Start the real ``docbase serve`` as a subprocess over TLS on loopback (no tests here).

Used by ``test_serve*.py``, ``test_readme*.py``, the fault tests (``test_crash_recovery.py``
and others, which crash a server with :func:`kill`) and ``benchmarks/soak.py``:
:func:`launch` runs the installed console script (or ``python -m docbase.cli``) in a
temporary working directory and waits until ``GET /health`` answers over TLS with the
server's own certificate.
"""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from docbase.testing.loopback import free_port

START_TIMEOUT = 120.0
"""Seconds for a server to answer ``/health``: only a hang takes that long, though a
loaded machine (the suite's parallel workers, other runs) may take tens of seconds."""

REQUEST_TIMEOUT = 60.0
"""Seconds a request of :attr:`Served.client` may take, likewise a deadline for hangs."""

GRACEFUL_SECONDS = "8"
"""The served processes' ``graceful_timeout``: a worker whose application shutdown hangs
exits after it (``docbase/http/shutdown_watch.py``), within :meth:`Served.stop`'s 20 s."""
STUCK = "the application shutdown is still running"
"""What a worker logs when its shutdown hung (then it exits)."""
STUCK_WARNING = "a served worker's application shutdown hung"
"""How :class:`StuckShutdown` begins: ``pyproject.toml``'s ``filterwarnings`` shows it
by this text (naming the class would import ``tests``, which a pytest run from another
directory cannot: ``tests/test_suite_hygiene.py``)."""


class StuckShutdown(UserWarning):
    """A served worker's application shutdown hung, and the worker exited after
    ``graceful_timeout``: a defect of the product, not of the test that stopped it, so
    it is shown in the summary of warnings with the log (where the hanging await is),
    and the test's own verdict stands."""


def docbase_command() -> list[str]:
    """The ``docbase`` console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "docbase"
    return [str(script)] if script.exists() else [sys.executable, "-m", "docbase.cli"]


def run_cli(cwd: Path, *args: str, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``docbase ARGS`` to completion."""
    result = subprocess.run([*docbase_command(), *args], cwd=cwd, capture_output=True,
                            text=True, env=env or child_env(), timeout=60, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"docbase {' '.join(args)} exited {result.returncode}:\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DOCBASE_ADMIN_KEY"}
    env.update(extra)
    return env


class Served:
    """A running ``docbase serve`` process and a client that trusts its certificate."""

    def __init__(self, process: subprocess.Popen[bytes], cwd: Path, data_dir: Path,
                 port: int, log: Path, scheme: str = "https") -> None:
        self.process = process
        self.cwd = cwd
        self.data_dir = data_dir
        self.port = port
        self.log = log
        self.url = f"{scheme}://127.0.0.1:{port}"
        self._client: httpx.Client | None = None

    @property
    def admin_key(self) -> str:
        return (self.data_dir / "admin.key").read_text().strip()

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.data_dir / "cert.pem"))

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            verify: Any = self.ssl_context() if self.url.startswith("https") else True
            self._client = httpx.Client(base_url=self.url, verify=verify,
                                        timeout=REQUEST_TIMEOUT)
        return self._client

    def request(self, method: str, path: str, key: str | None = None,
                **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if key is not None:
            headers["x-apikey"] = key
        return self.client.request(method, path, headers=headers, **kwargs)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
                raise AssertionError(f"server did not stop within {timeout}s:\n"
                                     f"{self.output()}") from None
        if STUCK in (output := self.output()):
            warnings.warn(StuckShutdown(f"{STUCK_WARNING}:\n"
                                        f"{output[max(output.index(STUCK) - 80, 0):][:6000]}"),
                          stacklevel=2)
        return self.process.returncode


def kill(served: Served) -> None:
    """Crash the whole server: SIGKILL its main process and every worker, then reap it.

    Killing only the main process would leave its workers serving as orphans.
    """
    workers = child_processes(served.process.pid)
    for pid in (served.process.pid, *workers):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    served.process.wait(10)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.01)  # not our children: wait until they are dead (or zombies)
    served.stop()  # closes the client; the process is already gone


def alive(pid: int) -> bool:
    """Tell whether process ``pid`` runs (a zombie does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def launch(cwd: Path, *args: str, env: dict[str, str] | None = None,
           port: int | None = None, data_dir: Path | None = None,
           scheme: str = "https", wait: bool = True) -> Served:
    """Start ``docbase serve ARGS --port P`` in ``cwd``; wait for /health unless told not.

    Without a given port, a free one is picked, and picked again should another process
    take it first (other test runs share the machine).
    """
    for _attempt in range(3 if port is None else 1):
        served = _start(cwd, args, env, port or free_port(), data_dir, scheme)
        if not wait:
            return served
        try:
            wait_ready(served)
        except PortTaken:
            continue
        return served
    raise AssertionError(f"no free port for docbase serve:\n{served.output()}")


class PortTaken(AssertionError):
    """The server could not listen: another process took the port first."""


def _start(cwd: Path, args: tuple[str, ...], env: dict[str, str] | None, port: int,
           data_dir: Path | None, scheme: str) -> Served:
    log = cwd / f"serve-{port}-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*docbase_command(), "serve", "--port", str(port), *args],
            cwd=cwd, env={"DOCBASE_GRACEFUL_TIMEOUT": GRACEFUL_SECONDS, **(env or child_env())},
            stdout=out, stderr=subprocess.STDOUT,
        )
    return Served(process, cwd, data_dir or cwd / "docbase-data", port, log, scheme)


def wait_ready(served: Served, timeout: float = START_TIMEOUT) -> None:
    """Wait until this server (its log says it listens) answers ``GET /health``."""
    deadline = time.monotonic() + timeout
    listening = f"Listening at: {served.url}"
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            output = served.output()
            if "cannot listen on" in output:
                raise PortTaken(output)
            raise AssertionError(f"docbase serve exited {served.process.returncode}:\n"
                                 f"{output}")
        if listening in served.output():
            with contextlib.suppress(httpx.TransportError, ssl.SSLError, OSError):
                if served.request("GET", "/health").status_code == 200:
                    return
        time.sleep(0.1)
    served.stop(signal.SIGKILL)
    raise AssertionError(f"docbase serve not ready within {timeout}s:\n{served.output()}")


def eventually(condition: Callable[[], bool], what: str = "the condition",
               timeout: float = 60) -> None:
    """Wait until ``condition()`` holds, as other processes act; fail after ``timeout`` s
    (a deadline for hangs: under load, other processes may take seconds to act)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@contextlib.contextmanager
def serving(cwd: Path, *args: str, **kwargs: Any) -> Iterator[Served]:
    """Serve for the ``with`` block, then stop the server (SIGTERM, then SIGKILL).

    Should the block fail, its failure is what the test reports: a server that then
    does not stop in time (a request the failure left in flight) adds a note to it
    rather than replacing it.
    """
    served = launch(cwd, *args, **kwargs)
    try:
        yield served
    except BaseException as failure:
        try:
            served.stop()
        except AssertionError as stopping:
            failure.add_note(f"and then: {stopping}")
        raise
    served.stop()


def child_processes(pid: int) -> list[int]:
    """The ids of the processes whose parent is ``pid`` (a server's workers), leaving
    out multiprocessing's resource tracker."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid) and not _is_resource_tracker(status.parent):
            found.append(int(status.parent.name))
    return found


def _is_resource_tracker(process: Path) -> bool:
    """Whether a child is multiprocessing's resource tracker, which spawned workers share
    with their supervisor: a helper process, not a worker."""
    try:
        return b"resource_tracker" in (process / "cmdline").read_bytes()
    except OSError:
        return False
