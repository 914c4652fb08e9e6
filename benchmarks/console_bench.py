"""How long the console's collection browser takes to answer, deep into a large collection.

A script, not a test. Fills one collection with ``--count`` documents (default
1,000,000; written straight to the store in batches, since only the reads are
measured), signs an administrator in by opening a console session, then asks the
application, in-process through httpx's ASGI transport (no network, no TLS: the
server's own time), for

- the browser's first page (``GET /_/c/big``, 25 documents, HTML),
- a page 10,000 documents deep (``GET /_/c/big?skip=10000``),
- and the same two reads through ``GET /rest/big?max=25[&skip=10000]`` (JSON), for
  the ratio of the console's cost to the API's,

interleaved round by round, and prints the median and 95th percentile of each.

    .venv/bin/python benchmarks/console_bench.py [--storage URL] [--count N] [--rounds N]

The default storage is a temporary SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import tempfile
import time
from typing import Any

import httpx

import docbase
from docbase.core import auth
from docbase.core.auth.sessions import open_session
from docbase.core.documents import new_document
from docbase.core.server import Server
from docbase.http.app import create_app

BATCH = 10_000
DEEP = 10_000
READS = {
    "console first page": "/_/c/big",
    "console 10,000 deep": f"/_/c/big?skip={DEEP}",
    "rest first page": "/rest/big?max=25",
    "rest 10,000 deep": f"/rest/big?max=25&skip={DEEP}",
}


async def fill(db: docbase.Database, count: int) -> float:
    """Write ``count`` documents to ``big``; return the seconds it took."""
    started = time.perf_counter()
    for first in range(0, count, BATCH):
        batch = [new_document({"name": f"person {n}", "age": n % 90, "city": f"c{n % 500}"},
                              "bench") for n in range(first, min(first + BATCH, count))]
        await db.store.insert("big", batch)
    return time.perf_counter() - started


def _documents(answer: httpx.Response) -> int:
    """How many documents an answer holds (rows of the console's table, or JSON items)."""
    if answer.headers["content-type"].startswith("application/json"):
        return len(answer.json())
    return answer.text.count('<td><a href="/_/c/big/')


async def measure(storage: str, count: int, rounds: int) -> dict[str, Any]:
    async with await docbase.connect(storage) as db:
        filled = await fill(db, count)
        user = await auth.create_user(db, "bench@example.com", "bench password", admin=True)
        token, _ = await open_session(db, user)
        key, _ = await auth.create_key(db, full_access=True)
        app = create_app(Server({"docbase": db}), manage_lifespan=False)
        transport = httpx.ASGITransport(app=app)
        times: dict[str, list[float]] = {name: [] for name in READS}
        async with httpx.AsyncClient(transport=transport, base_url="https://console.test",
                                     headers={"x-apikey": key},
                                     cookies={"docbase_console": token}) as client:
            for round_ in range(rounds + 1):
                for name, path in READS.items():
                    started = time.perf_counter()
                    answer = await client.get(path)
                    elapsed = time.perf_counter() - started
                    assert answer.status_code == 200, (path, answer.status_code, answer.text)
                    assert _documents(answer) == 25, (path, answer.text[:500])
                    if round_:  # the first round warms caches and is not counted
                        times[name].append(elapsed * 1000)
        return {"count": count, "fill_seconds": round(filled, 1),
                "reads": {name: {"median_ms": round(statistics.median(t), 1),
                                 "p95_ms": round(sorted(t)[int(len(t) * 0.95) - 1], 1)}
                          for name, t in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", help="storage URL (default: a temporary SQLite file)")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    with tempfile.TemporaryDirectory() as directory:
        storage = args.storage or f"sqlite:///{directory}/console.db"
        result = asyncio.run(measure(storage, args.count, args.rounds))
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['count']:,} documents written in {result['fill_seconds']} s")
    for name, figures in result["reads"].items():
        print(f"{name:>22}: median {figures['median_ms']:7.1f} ms   "
              f"p95 {figures['p95_ms']:7.1f} ms")


if __name__ == "__main__":
    main()
