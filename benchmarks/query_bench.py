"""query_20 on a large collection with an index on ``price``, over HTTP (a script, not a test).

For each store it loads ``--size`` documents of versus's shape (``benchmarks/versus.py``:
name, price, two tags, a date) into collection ``items`` through the store's bulk
insert (``SqlDocumentStore.insert``, 50,000 per call: far quicker than HTTP), indexes
``price`` (``ensure_index``, what a schema field with ``index: true`` does), then starts
``docbase serve --workers 2`` on that storage and loads it with ``wrk`` (1 thread, 32
connections) on the query of versus's ``query_20`` workload::

    GET /rest/items?q={"price":{"$gt":50}}&h={"$orderby":{"price":-1},"$max":20}

It prints requests/s and p99 per round (best and median over ``--rounds``), and the
same query's latency in process (``store.find``, no HTTP) for reference.

    .venv/bin/python benchmarks/query_bench.py [--size 1000000] [--stores sqlite,postgresql]
        [--duration 10] [--rounds 3] [--postgresql postgresql://postgres@127.0.0.1]

SQLite lives in a temporary directory; PostgreSQL in database ``query_bench``, dropped
and created afresh (and dropped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from versus import KEY, document, wait_ready, wrk  # noqa: E402

from docbase.adapters.sql import from_url  # noqa: E402
from docbase.core.documents import new_document  # noqa: E402
from docbase.core.query import Gt, Query, SortKey  # noqa: E402

BATCH = 50_000
PORT = 8163
QUERY = Query(filter=Gt(("price",), 50), sort=(SortKey(("price",), -1),), limit=20)
URL_QUERY = urllib.parse.urlencode({"q": '{"price":{"$gt":50}}',
                                    "h": '{"$orderby":{"price":-1},"$max":20}'})


async def load(url: str, size: int) -> float:
    """Fill ``items``, index ``price``; return the in-process median latency (ms)."""
    store, _ = from_url(url)
    async with store:
        started = time.perf_counter()
        for start in range(0, size, BATCH):
            stop = min(size, start + BATCH)
            await store.insert("items", [new_document(document(i), "bench")
                                         for i in range(start, stop)])
        await store.ensure_index("items", ("price",))  # (and ANALYZE on PostgreSQL)
        print(f"  loaded {size:,} and indexed in {time.perf_counter() - started:.0f} s",
              flush=True)
        print("  plan:\n    " + (await store.explain("items", QUERY)).replace("\n", "\n    "),
              flush=True)
        timings = []
        for _ in range(200):
            began = time.perf_counter()
            found = await store.find("items", QUERY)
            timings.append((time.perf_counter() - began) * 1000)
        assert len(found) == 20
        assert found[0]["price"] == max(d["price"] for d in found)
        return statistics.median(timings)


@contextlib.contextmanager
def serving(url: str, data: str) -> Iterator[str]:
    command = [sys.executable, "-m", "docbase.cli", "serve", "--data-dir", data,
               "--storage", url, "--port", str(PORT), "--proxy-headers", "--workers", "2"]
    env = {**os.environ, "DOCBASE_ADMIN_KEY": KEY}
    with open(Path(data) / "serve.log", "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{PORT}"
    try:
        wait_ready(base + "/health", {"X-Forwarded-Proto": "https", "x-apikey": KEY})
        yield base
    finally:
        process.terminate()
        process.wait(timeout=60)


def measure(store: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    print(f"{store}:", flush=True)
    in_process = asyncio.run(load(url, args.size))
    with tempfile.TemporaryDirectory() as data, serving(url, data) as base:
        headers = ("X-Forwarded-Proto: https", f"x-apikey: {KEY}")
        target = f"{base}/rest/items?{URL_QUERY}"
        wrk(target, 2, headers=headers)  # warm-up: statements cached, pages in memory
        rounds = []
        for _ in range(args.rounds):
            result = wrk(target, args.duration, headers=headers)
            print(f"  {result['rps']:,.0f} req/s, p99 {result['p99_ms']:.1f} ms"
                  f"{', non-2xx ' + str(result['non2xx']) if result['non2xx'] else ''}",
                  flush=True)
            rounds.append(result)
    rates = [r["rps"] for r in rounds]
    summary = {"store": store, "size": args.size, "in_process_ms": round(in_process, 2),
               "best_rps": round(max(rates)), "median_rps": round(statistics.median(rates)),
               "median_p99_ms": round(statistics.median(r["p99_ms"] for r in rounds), 1)}
    print(f"  {summary}", flush=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1")
    args = parser.parse_args()
    results = []
    for store in args.stores.split(","):
        if store == "sqlite":
            with tempfile.TemporaryDirectory() as directory:
                results.append(measure(store, f"sqlite:///{directory}/bench.db", args))
            continue
        database = [f"{args.postgresql}/postgres", "-q", "-c"]
        subprocess.run(["psql", *database, "DROP DATABASE IF EXISTS query_bench WITH (FORCE)",
                        "-c", "CREATE DATABASE query_bench"], check=True, capture_output=True)
        try:
            results.append(measure(store, f"{args.postgresql}/query_bench", args))
        finally:
            subprocess.run(["psql", *database, "DROP DATABASE IF EXISTS query_bench WITH (FORCE)"],
                           check=False, capture_output=True)
    for row in results:
        print(row)


if __name__ == "__main__":
    main()
