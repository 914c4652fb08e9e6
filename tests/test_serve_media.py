"""A 200 MB upload to the real ``docbase serve`` streams: the worker's peak memory stays low.

The server is a real process (``tests/test_serve_harness.py``) on its default SQLite
storage, on PostgreSQL and on MongoDB (GridFS); the memory adapter keeps blobs in
memory by definition, so it has no such test. The client streams the multipart body
from a generator and hashes it on the way, so neither side needs the file in memory;
the test reads the worker's peak resident size (``VmHWM`` in ``/proc/<pid>/status``)
before and after the upload and a full download, and bounds the growth.

A worker killed (SIGKILL) in the middle of a slow client's 50 MB upload leaves chunks no
blob owns; ``docbase media sweep`` removes them and an orphaned blob, and every file
that was stored, and its thumbnail, is still served.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docbase import cli
from tests import media_samples as samples
from tests.served_engines import ENGINES, engine_storage
from tests.test_serve_harness import Served, child_processes, eventually, serving

SIZE = 200 * 1024 * 1024
BLOCK = 1024 * 1024
GROWTH_BOUND = 80 * 1024 * 1024
"""Peak memory a worker may gain over the upload and download: well under the file."""
BOUNDARY = "docbase-big-upload"


def peak_memory(pid: int) -> int:
    """The peak resident set size of a process, in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def block(number: int) -> bytes:
    """1 MiB of bytes that differ from block to block (so nothing compresses it away)."""
    seed = hashlib.sha256(number.to_bytes(8, "big")).digest()
    return seed * (BLOCK // len(seed))


def body(digest: hashlib._Hash) -> Iterator[bytes]:
    yield (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; "
           f"filename=\"archive.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
           ).encode()
    for number in range(SIZE // BLOCK):
        data = block(number)
        digest.update(data)
        yield data
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def the_worker(served: Served) -> int:
    workers = child_processes(served.process.pid)
    assert len(workers) == 1, f"expected one worker, found {workers}"
    return workers[0]


def upload_and_download(served: Served) -> None:
    worker = the_worker(served)
    warm = served.request("POST", "/media", served.admin_key,
                          files={"f": ("warm.txt", b"warm\n", "text/plain")})
    assert warm.status_code == 201, warm.text
    before = peak_memory(worker)
    sent = hashlib.sha256()
    length = len(b"".join(p for p in body(hashlib.sha256()) if len(p) < BLOCK)) + SIZE
    served.client.timeout = 300
    response = served.request(
        "POST", "/media", served.admin_key, content=body(sent),
        headers={"content-type": f"multipart/form-data; boundary={BOUNDARY}",
                 "content-length": str(length)})
    assert response.status_code == 201, response.text
    [media_id] = response.json()["ids"]
    meta = served.request("GET", f"/media/{media_id}/meta", served.admin_key).json()[0]
    assert (meta["filesize"], meta["sha256"]) == (SIZE, sent.hexdigest())
    received = hashlib.sha256()
    with served.client.stream("GET", f"/media/{media_id}") as download:
        assert download.status_code == 200
        for chunk in download.iter_bytes():
            received.update(chunk)
    assert received.hexdigest() == sent.hexdigest()
    growth = peak_memory(worker) - before
    print(f"worker peak memory grew by {growth / 2**20:.1f} MiB over a "
          f"{SIZE / 2**20:.0f} MiB upload and download")
    assert growth < GROWTH_BOUND, f"the worker's peak memory grew by {growth} bytes"


def test_a_200_mb_upload_streams_through_the_sqlite_server(tmp_path: Path) -> None:
    with serving(tmp_path, "--workers", "1") as served:
        upload_and_download(served)


@pytest.mark.postgres
def test_a_200_mb_upload_streams_through_the_postgresql_server(
    tmp_path: Path, schema_url: str
) -> None:
    with serving(tmp_path, "--workers", "1", "--storage", schema_url) as served:
        upload_and_download(served)


@pytest.mark.mongo
def test_a_200_mb_upload_streams_through_the_mongo_server(tmp_path: Path) -> None:
    import uuid

    from tests.backends import mongo_server, mongo_url

    base, _ = mongo_server()
    url = mongo_url(base, f"docbase_big_{uuid.uuid4().hex[:12]}")
    with serving(tmp_path, "--workers", "1", "--storage", url) as served:
        upload_and_download(served)


# ------------------------------------------------------------------ a crash mid-upload

HANG = 120
"""Seconds after which the kill case's waits fail: only a hang takes that long, though a
loaded machine (the suite's parallel workers) may take tens of seconds to respawn."""
KILL_BODY = 50 * BLOCK
SENT_BEFORE_KILL = 6 * BLOCK


class StalledUpload(threading.Thread):
    """A client sending a 50 MB upload that stops after 6 MB and waits (a slow client)."""

    def __init__(self, served: Served) -> None:
        super().__init__(daemon=True)
        self.served = served
        self.release = threading.Event()
        self.error: BaseException | None = None

    def body(self) -> Iterator[bytes]:
        yield (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; "
               f"filename=\"cut.bin\"\r\n\r\n").encode()
        for number in range(KILL_BODY // BLOCK):
            if number * BLOCK == SENT_BEFORE_KILL:
                self.release.wait(HANG)
            yield block(number)
        yield f"\r\n--{BOUNDARY}--\r\n".encode()

    def run(self) -> None:
        try:
            self.served.request("POST", "/media", self.served.admin_key, content=self.body(),
                                headers={"content-type": "multipart/form-data; "
                                                         f"boundary={BOUNDARY}"})
        except BaseException as exc:  # the server died under it: expected
            self.error = exc


def chunk_count(storage: str) -> int:
    """Chunks in the blob store of ``storage``, complete blobs' and unfinished puts' alike."""
    async def count() -> int:
        import docbase

        async with await docbase.connect(storage) as db:
            blobs: Any = db.media.blobs
            if hasattr(blobs, "backend"):
                import sqlalchemy as sa

                from docbase.adapters.sql.schema import blob_chunks

                return int(await blobs.backend.run(lambda conn: conn.execute(
                    sa.select(sa.func.count()).select_from(blob_chunks)).scalar(), write=False))
            return int(await blobs._chunks.count_documents({}))  # GridFS: <bucket>.chunks

    return asyncio.run(count())


def put_orphan(storage: str) -> str:
    """Bytes stored without metadata, as a crash between the two writes leaves them."""
    async def put() -> str:
        import docbase
        from docbase.core.ids import new_object_id

        async with await docbase.connect(storage) as db:
            key = new_object_id()
            await db.media.blobs.put(key, _once(b"orphan"), "text/plain")
            return key

    return asyncio.run(put())


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def healthy(served: Served) -> bool:
    with contextlib.suppress(httpx.TransportError, ssl.SSLError, OSError):
        return served.request("GET", "/health").status_code == 200
    return False


@pytest.mark.parametrize("engine", [e for e in ENGINES if e.values[0] != "memory"])
def test_a_worker_killed_mid_upload_leaves_only_what_the_sweep_removes(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    png = samples.png(300, 200)
    with (engine_storage(engine, tmp_path) as storage,
          serving(tmp_path, "--workers", "1", "--storage", storage) as served):
        kept = served.request("POST", "/media", served.admin_key, files=[
            ("a", ("kept.png", png, "image/png")), ("b", ("kept.txt", b"kept\n", "text/plain"))])
        assert kept.status_code == 201, kept.text
        kept_png, kept_text = kept.json()["ids"]
        thumbnail = served.request("GET", f"/media/{kept_png}", params={"s": "t"}).content
        baseline = chunk_count(storage)
        orphan = put_orphan(storage)
        assert chunk_count(storage) == baseline + 1

        upload = StalledUpload(served)
        upload.start()
        eventually(lambda: chunk_count(storage) >= baseline + 1 + 4, "the upload's chunks",
                   timeout=HANG)
        os.kill(the_worker(served), signal.SIGKILL)
        upload.release.set()
        upload.join(HANG)
        assert upload.error is not None
        eventually(lambda: len(child_processes(served.process.pid)) == 1 and healthy(served),
                   "the respawned worker", timeout=HANG)
        assert chunk_count(storage) > baseline + 1  # the killed upload's chunks stayed
        assert served.request("GET", "/media/*/meta", served.admin_key).json() != []

        time.sleep(2.1)  # blob ids count whole seconds: make every blob older than 1 s
        argv = ["media", "sweep", "--storage", storage, "--data-dir", str(served.data_dir),
                "--grace", "1"]
        assert cli.main(argv) == 0
        out, err = capsys.readouterr()
        assert out == f"{orphan}\n"
        assert "leftovers of 1 unfinished upload(s)" in err
        assert chunk_count(storage) == baseline
        names = [m["origname"] for m in
                 served.request("GET", "/media/*/meta", served.admin_key).json()]
        assert sorted(names) == ["kept.png", "kept.txt"]
        assert served.request("GET", f"/media/{kept_png}").content == png
        assert served.request("GET", f"/media/{kept_png}", params={"s": "t"}).content == thumbnail
        assert served.request("GET", f"/media/{kept_text}").content == b"kept\n"
