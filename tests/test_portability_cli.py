"""The portability commands as an operator runs them: real processes, real files."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import docbase
from docbase.core.documents import new_document
from docbase.core.portability import export_archive
from docbase.core.portability.migrating import verify

DOCUMENTS = 30000


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docbase.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)


async def _source_archive(path: Path, tmp: Path) -> None:
    async with await docbase.connect(f"sqlite:///{tmp}/source.db") as db:
        for start in range(0, DOCUMENTS, 10000):  # the store's bulk path: fast to seed
            await db.store.insert("things", [
                new_document({"n": i, "text": f"thing {i} ü", "tags": [i % 7]}, "seed")
                for i in range(start, start + 10000)])
        await export_archive(db, path)


async def _empty(url: str) -> None:
    async with await docbase.connect(url):
        pass


async def _checks(url: str, archive: Path) -> list[bool]:
    async with await docbase.connect(url) as db:
        from docbase.core.portability.archive import open_archive, read_manifest
        with open_archive(archive) as tar:
            manifest = read_manifest(tar)
        return [c.ok for c in await verify(db, archive, manifest.collections)]


async def _kill_while_importing(process: subprocess.Popen[bytes], url: str,
                                 after: float) -> int:
    """SIGKILL the import ``after`` seconds past its first stored batch; the count then."""
    async with await docbase.connect(url) as db:
        things = db.collection("things")
        for _ in range(12000):  # at most a minute for the first batch to land
            if await things.count() > 0 or process.poll() is not None:
                break
            await asyncio.sleep(0.005)
        await asyncio.sleep(after)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return await things.count()


def test_import_killed_at_random_moments_then_rerun_equals_one_clean_import(
        tmp_path: Path) -> None:
    archive = tmp_path / "things.tar"
    asyncio.run(_source_archive(archive, tmp_path))
    url = f"sqlite:///{tmp_path}/target.db"
    asyncio.run(_empty(url))
    rng = random.Random(24)
    counts = []
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-m", "docbase.cli", "import", str(archive), "--storage", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # an import runs at about 150,000 documents/s on an idle machine: 30,000 take 0.2 s
        counts.append(asyncio.run(_kill_while_importing(process, url, rng.uniform(0, 0.08))))
    assert any(0 < count < DOCUMENTS for count in counts), counts  # killed mid-import
    assert counts == sorted(counts)  # each run went on from where the last one stopped
    finished = run_cli("import", str(archive), "--storage", url)
    assert finished.returncode == 0, finished.stderr
    assert "imported 1 collection(s), 30000 document(s)" in finished.stderr
    assert asyncio.run(_checks(url, archive)) == [True]


def test_export_import_migrate_and_restore_from_the_command_line(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path}/a.db"
    asyncio.run(_seed(source))
    archive = tmp_path / "a.tar.gz"
    exported = run_cli("export", "--out", str(archive), "--storage", source)
    assert exported.returncode == 0, exported.stderr
    assert "exported 1 collection(s), 3 document(s)" in exported.stderr
    assert "docbase: birds: 3/3 (" in exported.stderr  # not a terminal: plain progress lines
    target = f"sqlite:///{tmp_path}/b.db"  # a new file: restore creates it
    restored = run_cli("restore", str(archive), "--storage", target)
    assert restored.returncode == 0, restored.stderr
    again = run_cli("restore", str(archive), "--storage", target)
    assert again.returncode == 1
    assert "is not empty" in again.stderr
    migrated = run_cli("migrate", "--to", f"sqlite:///{tmp_path}/c.db", "--storage", source)
    assert migrated.returncode == 0, migrated.stderr
    assert migrated.stdout.split("\n")[1].split() == ["birds", "3", "3", "ok"]
    backups = tmp_path / "backups"
    for _ in range(2):
        done = run_cli("backup", "--dir", str(backups), "--keep", "1", "--storage", source)
        assert done.returncode == 0, done.stderr
    assert len(list(backups.iterdir())) == 1


async def _fresh_server_database(url: str) -> None:
    from docbase.core.auth.keys import create_key
    async with await docbase.connect(url) as db:
        await create_key(db, full_access=True)
        await db.settings.set("mail.smtp.host", "smtp.example.com")


async def _seed(url: str) -> None:
    async with await docbase.connect(url) as db:
        await db.collection("birds").insert_many([{"name": n} for n in ("wren", "kite", "tit")])


async def _run_backup_job_three_times(url: str, directory: Path) -> None:
    from datetime import UTC, datetime

    from docbase.core.hooks.context import JobContext, PrivilegedDatabase
    from docbase.core.portability.backups import BACKUP_JOB, backup_job

    async with await docbase.connect(url) as db:
        job = backup_job(db, directory, 2, "0 3 * * *", db.settings)
        assert job.name == BACKUP_JOB
        for _ in range(3):
            run = job.function(JobContext(job=BACKUP_JOB, tick=datetime.now(UTC),
                                          db=PrivilegedDatabase(db)))
            assert run is not None
            await run


def test_the_backup_job_writes_restorable_archives_and_keeps_the_newest(
        tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path}/a.db"
    asyncio.run(_seed(source))
    asyncio.run(_run_backup_job_three_times(source, tmp_path / "backups"))
    kept = sorted((tmp_path / "backups").iterdir())
    assert len(kept) == 2
    target = f"sqlite:///{tmp_path}/b.db"
    asyncio.run(_fresh_server_database(target))  # a first key and settings do not count
    restored = run_cli("restore", str(kept[-1]), "--storage", target)
    assert restored.returncode == 0, restored.stderr
    assert "imported 1 collection(s), 3 document(s)" in restored.stderr


async def _numbers_in(archive: Path) -> list[int]:
    from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
    from docbase.core.database import Database
    from docbase.core.portability import import_archive

    async with Database(MemoryDocumentStore(), MemoryBlobStore()) as db:
        await import_archive(db, archive)
        found = [d for name in ("even", "odd")
                 for d in await db.collection(name).find({"i": {"$gte": 0}}, {"$max": 10000})]
        return sorted(d["i"] for d in found)


def test_export_while_a_server_takes_writes_is_one_point_in_time(tmp_path: Path) -> None:
    """A server process takes writes 0, 1, 2, ... alternately into two collections while
    ``docbase export`` runs in another process: the archive holds every write
    acknowledged before the export began and a prefix of the sequence (the store at one
    moment), which needs the server to log its writes for the export (capture lease)."""
    import threading

    from tests.test_serve_harness import launch

    served = launch(tmp_path)
    try:
        key = served.admin_key
        for _ in range(30):  # "odd" is copied after "even": long enough for writes meanwhile
            done = served.request("POST", "/rest/odd", key, json=[{"i": -1}] * 1000)
            assert done.status_code == 201, done.text
        written = 0
        stop = threading.Event()

        def writer() -> None:
            nonlocal written
            while not stop.is_set():
                name = "even" if written % 2 == 0 else "odd"
                answer = served.request("POST", f"/rest/{name}", key, json={"i": written})
                assert answer.status_code == 201
                written += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            while written < 20:
                threading.Event().wait(0.05)
            acknowledged = written
            archive = tmp_path / "live.tar"
            exported = run_cli("export", "--out", str(archive),
                               "--data-dir", str(served.data_dir))
            assert exported.returncode == 0, exported.stderr
        finally:
            stop.set()
            thread.join()
    finally:
        served.stop()
    numbers = asyncio.run(_numbers_in(archive))
    assert numbers[:acknowledged] == list(range(acknowledged))
    assert numbers == list(range(len(numbers)))
    assert len(numbers) > acknowledged + 5  # writes went on during the export


def test_serve_with_a_backup_dir_writes_backups_on_its_schedule(tmp_path: Path) -> None:
    import time

    from tests.test_serve_harness import launch

    backups = tmp_path / "backups"
    served = launch(tmp_path, "--backup-dir", str(backups), "--backup-schedule",
                    "* * * * * */2", "--backup-keep", "2")
    try:
        added = served.request("POST", "/rest/birds", served.admin_key, json={"name": "wren"})
        assert added.status_code == 201
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(seen) < 3:
            seen.update(path.name for path in backups.glob("docbase-*.tar.gz"))
            time.sleep(0.1)
    finally:
        served.stop()
    kept = {path.name for path in backups.glob("docbase-*.tar.gz")}
    assert len(seen) >= 3, served.output()
    assert min(seen) not in kept  # retention deleted the oldest
    assert 2 <= len(kept) <= 3  # the newest two (and one a stopped run may not have expired)
