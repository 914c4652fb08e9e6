"""``docbase serve`` supervises its workers from a small process without the library.

Preparing the deployment imports docbase, SQLAlchemy and the app; the process then
replaces itself (``os.execv``, same process id) by a fresh interpreter running only
uvicorn's supervisor (``docbase/http/launch.py``), which spawns the workers as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.test_serve_harness import child_processes, eventually, launch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc/<pid>/maps")


def mapped(pid: int) -> str:
    """The files mapped into process ``pid``."""
    return Path(f"/proc/{pid}/maps").read_text()


def test_the_supervisor_holds_no_database_driver_and_its_workers_serve(
    tmp_path: Path
) -> None:
    served = launch(tmp_path, "--workers", "2")
    try:
        assert served.request("GET", "/health").status_code == 200
        workers = child_processes(served.process.pid)
        assert len(workers) == 2
        # the workers map SQLite's driver and SQLAlchemy's compiled parts (once both have
        # started: one may still be importing while the other answers)...
        eventually(lambda: all("_sqlite3" in mapped(pid) and "sqlalchemy" in mapped(pid)
                               for pid in workers), "both workers to open the database",
                   timeout=60)
        # ...the supervisor, the same process id that prepared the deployment, neither
        supervisor = mapped(served.process.pid)
        assert "_sqlite3" not in supervisor
        assert "sqlalchemy" not in supervisor
        assert (served.data_dir / "docbase.pid").read_text().strip() == str(
            served.process.pid)
    finally:
        served.stop()
