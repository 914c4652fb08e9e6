"""``docbase serve`` supervises its workers from a small process without the library.

Preparing the deployment imports docbase, SQLAlchemy and the app; the process then
replaces itself (``os.execv``, same process id) by a fresh interpreter running only
uvicorn's supervisor (``docbase/http/launch.py``), which spawns the workers as before.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.test_serve_harness import child_env, child_processes, eventually, launch

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


def environment(pid: int) -> dict[str, str]:
    """The environment process ``pid`` started with."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)


def every_child(pid: int) -> list[str]:
    """The command lines of all child processes of ``pid``, the resource tracker too."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"PPid:\t{pid}\n" in status.read_text():
                found.append((status.parent / "cmdline").read_bytes().decode())
        except OSError:
            continue
    return found


def test_the_workers_run_without_a_resource_tracker_and_with_two_malloc_arenas(
    tmp_path: Path
) -> None:
    env = {k: v for k, v in child_env().items() if k != "MALLOC_ARENA_MAX"}
    served = launch(tmp_path, "--workers", "2", env=env)
    try:
        assert served.request("GET", "/health").status_code == 200
        workers = child_processes(served.process.pid)
        assert len(workers) == 2
        # no third process: multiprocessing's resource tracker is not started
        children = every_child(served.process.pid)
        assert len(children) == 2, children
        assert not any("resource_tracker" in c for c in children)
        assert all(environment(pid).get("MALLOC_ARENA_MAX") == "2" for pid in workers)
        # SIGHUP replaces both workers (spawned again), still without a tracker
        served.process.send_signal(signal.SIGHUP)
        eventually(lambda: not set(workers) & set(child_processes(served.process.pid))
                   and len(child_processes(served.process.pid)) == 2,
                   "the supervisor to replace both workers", timeout=120)
        assert len(every_child(served.process.pid)) == 2
        assert served.request("GET", "/health").status_code == 200
    finally:
        served.stop()


def test_an_operators_malloc_arena_max_is_kept(tmp_path: Path) -> None:
    served = launch(tmp_path, "--workers", "1", env=child_env(MALLOC_ARENA_MAX="4"))
    try:
        assert served.request("GET", "/health").status_code == 200
        (worker,) = child_processes(served.process.pid)
        assert environment(worker)["MALLOC_ARENA_MAX"] == "4"
    finally:
        served.stop()


def test_a_worker_loads_the_console_password_and_regex_libraries_only_when_used(
    tmp_path: Path
) -> None:
    served = launch(tmp_path, "--workers", "1")
    try:
        key = served.admin_key
        created = served.request("POST", "/rest/things", key=key, json={"name": "Ann"})
        assert created.status_code == 201, created.text
        assert served.request("GET", "/rest/things", key=key).status_code == 200
        (worker,) = child_processes(served.process.pid)
        at_rest = mapped(worker)
        # jinja2's markupsafe, argon2's bindings and the regex engine: none after a
        # create and a list
        for library in ("markupsafe", "_argon2_cffi_bindings", "regex/_regex"):
            assert library not in at_rest, library
        found = served.request("GET", '/rest/things?q={"name":{"$regex":"^A"}}', key=key)
        assert [d["name"] for d in found.json()] == ["Ann"]
        page = served.request("GET", "/_/signin")
        assert page.status_code == 200, page.text
        assert served.request("POST", "/auth/login", json={
            "email": "nobody@example.com", "password": "not a password"}).status_code == 401
        used = mapped(worker)
        for library in ("markupsafe", "_argon2_cffi_bindings", "regex/_regex"):
            assert library in used, library
    finally:
        served.stop()
