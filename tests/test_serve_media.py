"""A 200 MB upload to the real ``docbase serve`` streams: the worker's peak memory stays low.

The server is a real process (``tests/test_serve_harness.py``) on its default SQLite
storage, on PostgreSQL and on MongoDB (GridFS); the memory adapter keeps blobs in
memory by definition, so it has no such test. The client streams the multipart body
from a generator and hashes it on the way, so neither side needs the file in memory;
the test reads the worker's peak resident size (``VmHWM`` in ``/proc/<pid>/status``)
before and after the upload and a full download, and bounds the growth.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_serve_harness import Served, child_processes, serving

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
