"""Start a throw-away MongoDB wire-protocol server (CongoDB) for tests.

No ``mongod`` is installable on the machines this project is tested on, so the tests
of the Mongo adapter run against CongoDB, a MongoDB wire-protocol server written in
TypeScript and shipped in the npm package ``@push.rocks/smartmongo`` (2.2.0). The
project-owned scripts in ``scripts/mongo-wire-server/`` install it (``install.sh``) and
run it (``start.mjs``); this module drives them from Python::

    from docbase.testing.mongo_wire import node_available, start_mongo_wire_server

    if node_available():
        with start_mongo_wire_server() as server:
            client = pymongo.MongoClient(server.url)

Storage is in memory, so every server starts empty. CongoDB is not MongoDB: see
``scripts/mongo-wire-server/FINDINGS.md`` for what it does and does not support.
Only the standard library is used here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from docbase.testing.loopback import HOST, accepts_connections, free_port
from docbase.testing.mongo_wire_install import (
    MongoWireServerError,
    default_install_dir,
    needs_install,
    node_available,
    run_install,
    scripts_dir,
)

__all__ = [
    "MongoWireServer",
    "MongoWireServerError",
    "default_install_dir",
    "node_available",
    "scripts_dir",
    "start_mongo_wire_server",
]

START_TIMEOUT_S = 30.0
"""How long to wait for the server to accept TCP connections."""

STOP_TIMEOUT_S = 10.0
"""How long to wait after SIGTERM before killing the server."""

_START_ATTEMPTS = 3  # a free port can be taken by someone else before node binds it




def _read_log(log: IO[bytes]) -> str:
    """Return everything written to ``log`` so far, decoded leniently."""
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", errors="replace").strip()


def _terminate(process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Stop ``process`` (SIGTERM, then SIGKILL) and close its log; idempotent."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log.close()


class MongoWireServer:
    """A running CongoDB server; a context manager that stops it on exit.

    Create it with :func:`start_mongo_wire_server`. The server is also stopped when the
    object is garbage-collected or the interpreter exits.
    """

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: IO[bytes]) -> None:
        self._process = process
        self._port = port
        self._log = log
        self._finalizer = weakref.finalize(self, _terminate, process, log)

    @property
    def port(self) -> int:
        """The TCP port the server listens on (on 127.0.0.1)."""
        return self._port

    @property
    def url(self) -> str:
        """A MongoDB connection URL for the server, e.g. ``mongodb://127.0.0.1:PORT/?...``.

        It asks the driver to poll the server's state rather than stream it: CongoDB
        answers ``hello`` with a ``topologyVersion`` of a new process id every time and
        without waiting, so pymongo's streaming monitor asked again at once, thousands of
        times a second, and starved its own event loop (a test sharing its process with
        a PostgreSQL store took 12 s instead of 1.5).
        """
        return f"mongodb://{HOST}:{self._port}/?serverMonitoringMode=poll"

    @property
    def pid(self) -> int:
        """The process id of the ``node`` process."""
        return self._process.pid

    @property
    def running(self) -> bool:
        """Whether the server process is still alive."""
        return self._process.poll() is None

    def output(self) -> str:
        """Return what the server wrote to stdout/stderr so far ('' once stopped)."""
        if self._log.closed:
            return ""
        return _read_log(self._log)

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL after a timeout). Safe to call twice."""
        self._finalizer()

    def kill(self) -> None:
        """Crash the server: SIGKILL at once. Its data, kept in memory, is gone."""
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        self._process.wait()
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<MongoWireServer {self.url} pid={self.pid} {state}>"


YOUNG_GENERATION_MB = 4
"""V8's semi-space for the wire server's new objects (Node.js's default is 16 MB, three
such spaces): a test run keeps a server per worker, and 4 MB cut each one's peak by
about 25 MB with no measurable cost in time (docs/testing.md, "Memory")."""


def _node_options() -> str:
    """The caller's ``NODE_OPTIONS`` with the smaller young generation."""
    inherited = os.environ.get("NODE_OPTIONS", "")
    return f"{inherited} --max-semi-space-size={YOUNG_GENERATION_MB}".strip()


def _launch(install_dir: Path, timeout: float, port: int | None) -> MongoWireServer:
    """Start ``node start.mjs PORT`` once and wait for the port to accept connections."""
    port = port or free_port()
    # A file, not a pipe: nobody reads the output while the server runs, and a full pipe
    # would block it.
    log = tempfile.TemporaryFile(prefix="mongo-wire-")  # noqa: SIM115 - closed by _terminate
    try:
        process = subprocess.Popen(
            ["node", "start.mjs", str(port)],
            cwd=install_dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NODE_NO_WARNINGS": "1", "NODE_OPTIONS": _node_options()},
        )
    except OSError as exc:
        log.close()
        raise MongoWireServerError(f"cannot run node in {install_dir}: {exc}") from exc
    server = MongoWireServer(process, port, log)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            output = _read_log(log)
            server.stop()
            raise MongoWireServerError(
                f"the Mongo wire server exited with status {process.returncode} before "
                f"listening on port {port}; its output:\n{output or '(none)'}"
            )
        if accepts_connections(port):
            return server
        if time.monotonic() >= deadline:
            output = _read_log(log)
            server.stop()
            raise MongoWireServerError(
                f"the Mongo wire server did not accept connections on {HOST}:{port} "
                f"within {timeout:.0f} s; its output:\n{output or '(none)'}"
            )
        time.sleep(0.05)


def start_mongo_wire_server(
    install_dir: Path | None = None, *, timeout: float = START_TIMEOUT_S,
    port: int | None = None,
) -> MongoWireServer:
    """Install (if needed) and start a CongoDB server on a free port of 127.0.0.1.

    Args:
        install_dir: where the npm packages live; ``<repo>/.mongo-wire`` by default.
            ``scripts/mongo-wire-server/install.sh`` runs first unless the directory
            already holds a complete install with an up-to-date ``start.mjs``.
        timeout: seconds to wait for the server to accept TCP connections.
        port: listen on this port (e.g. to restart a killed server where its clients
            expect it) instead of a free one.

    Returns:
        The running server; use it as a context manager or call
        :meth:`MongoWireServer.stop`.

    Raises:
        MongoWireServerError: if the scripts are not found, node/npm are missing, the
            install fails, or the server does not start in time (the message includes
            the server's output).

    """
    scripts = scripts_dir()
    directory = (install_dir if install_dir is not None else default_install_dir()).resolve()
    if not node_available():
        raise MongoWireServerError("'node' is not on PATH; the Mongo wire server needs Node.js")
    if needs_install(directory, scripts):
        run_install(directory, scripts)
    attempts = _START_ATTEMPTS if port is None else 1
    for attempt in range(1, attempts + 1):
        try:
            return _launch(directory, timeout, port)
        except MongoWireServerError as exc:
            # Retry only the early-exit case that a port race causes.
            if attempt == attempts or "EADDRINUSE" not in str(exc):
                raise
    raise AssertionError("unreachable")  # pragma: no cover
