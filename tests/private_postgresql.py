"""A private PostgreSQL instance that a test may stop and start (no tests here).

The shared server at 127.0.0.1:5432 must stay up for everyone, so an outage test runs
its own instance: ``initdb`` into a fresh directory, ``pg_ctl start`` on a free port,
and ``stop()``/``start()`` as the test needs. ``initdb`` and ``pg_ctl`` refuse to run
as root, so as root they run as the ``postgres`` OS user (``runuser``). Without the
PostgreSQL binaries the test is skipped locally and fails under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from docbase.testing.loopback import held_port
from tests.backends import service_missing

OS_USER = "postgres"


def _bindir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    found = shutil.which("pg_ctl")
    if found:
        candidates.insert(0, found)
    return Path(candidates[0]).parent if candidates else None


class PrivatePostgres:
    """One PostgreSQL cluster in a temporary directory, on its own port."""

    def __init__(self, bindir: Path, directory: Path, port: int) -> None:
        self.bindir = bindir
        self.directory = directory
        self.data = directory / "data"
        self.port = port

    @property
    def url(self) -> str:
        """The storage URL of its ``postgres`` database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", OS_USER, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                                check=False)
        if result.returncode != 0:
            raise AssertionError(f"{tool} failed ({result.returncode}):\n{result.stdout}\n"
                                 f"{result.stderr}\n{self.log()}")

    def log(self) -> str:
        log = self.directory / "postgres.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                  "--no-sync", "-E", "UTF8")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                   f"-k {self.directory} -c fsync=off")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "postgres.log"),
                  "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are disconnected) and wait."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")


@contextlib.contextmanager
def private_postgresql() -> Iterator[PrivatePostgres]:
    """A started private PostgreSQL, stopped and removed afterwards."""
    bindir = _bindir()
    if bindir is None or not (bindir / "initdb").exists():
        service_missing("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
        raise AssertionError("unreachable")
    directory = Path(tempfile.mkdtemp(prefix="docbase-pg-"))
    # held for the server's life: a test stops it and starts it again on the same port
    with held_port() as port:
        try:
            if os.geteuid() == 0:
                shutil.chown(directory, OS_USER, OS_USER)
            server = PrivatePostgres(bindir, directory, port)
            server.init()
            server.start()
            try:
                yield server
            finally:
                with contextlib.suppress(AssertionError):
                    server.stop()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
