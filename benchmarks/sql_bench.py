"""Benchmark of the SQL adapter on SQLite and PostgreSQL (a script, not a test).

For each database it prints: bulk insert throughput (10k and 100k documents, one
``insert`` call each, so one transaction), and, as one indexed collection grows to
10k, 100k and 1M documents, get-by-id throughput and the latency of an equality query
on an indexed field and on an unindexed one. Everything goes through the adapter's
public API (``SqlDocumentStore``); only ``ANALYZE`` after loading is issued directly.

    .venv/bin/python benchmarks/sql_bench.py [--sizes 10000,100000,1000000]
        [--backends sqlite,postgresql] [--postgresql URL] [--json]

PostgreSQL runs in a fresh schema that is dropped at the end; SQLite in a temporary
file. Latencies are medians (and 95th percentiles) over repeated queries; get-by-id is
the best of three rounds. At the end, indexed equality on a separate collection of the
smallest size and on the largest one is measured in alternating rounds, and their
ratio printed (the acceptance figure: within 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from docbase.adapters.sql import SqlDocumentStore, create_engine, from_url
from docbase.adapters.sql import schema as layout
from docbase.core.documents import Document, new_document
from docbase.core.query import Eq, Query

LOAD_BATCH = 50_000
GETS = 2_000
INDEXED_QUERIES = 500
UNINDEXED_QUERIES = 5
ROUNDS = 10


def make_documents(start: int, stop: int) -> list[Document]:
    rng = random.Random(start)
    return [new_document({
        "email": f"user{i}@example.com",
        "nick": f"nick{i}",
        "age": i % 100,
        "tags": rng.sample(["red", "green", "blue", "black", "white"], 2),
        "address": {"city": f"city{i % 1000}", "zip": f"{i % 100_000:05d}"},
        "score": round(rng.random() * 100, 3),
        "active": i % 2 == 0,
    }, "bench") for i in range(start, stop)]


@contextlib.asynccontextmanager
async def open_store(backend: str, postgresql_url: str) -> AsyncIterator[SqlDocumentStore]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            store, _ = from_url(f"sqlite:///{directory}/bench.db")
            async with store:
                yield store
        return
    schema = f"docbase_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgresql_url)
    assert isinstance(admin, AsyncEngine)
    async with admin.begin() as conn:
        await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        store, _ = from_url(f"{postgresql_url}?schema={schema}")
        async with store:
            yield store
    finally:
        async with admin.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


async def analyze(store: SqlDocumentStore, collection: str) -> None:
    if store.dialect.name != "postgresql":
        return
    def work(conn: sa.Connection) -> None:
        number = store.backend.number(conn, collection)
        assert number is not None
        conn.execute(sa.text(f'ANALYZE "{layout.table_name(number)}"'))

    await store.backend.run(work, write=True)


async def timed_insert(store: SqlDocumentStore, collection: str, count: int) -> float:
    documents = make_documents(0, count)
    started = time.perf_counter()
    await store.insert(collection, documents)
    return count / (time.perf_counter() - started)


async def latencies(store: SqlDocumentStore, queries: list[Query],
                    collection: str = "people") -> list[float]:
    found = []
    for query in queries:
        started = time.perf_counter()
        result = await store.find(collection, query)
        found.append((time.perf_counter() - started) * 1000)
        assert len(result) == 1, query
    return found


async def interleaved_ratio(store: SqlDocumentStore, small: int, large: int) -> dict[str, Any]:
    """Indexed equality on the small and the large collection, alternating in rounds.

    Measured side by side, so that load from other work on the machine (which drifts
    over a run) weighs on both sizes alike.
    """
    rng = random.Random(7)
    timings: dict[str, list[float]] = {"small": [], "large": []}
    for _ in range(ROUNDS):
        for label, collection, size in (("small", "people_small", small),
                                        ("large", "people", large)):
            queries = [Query(filter=Eq(("email",), f"user{rng.randrange(size)}@example.com"))
                       for _ in range(50)]
            timings[label].extend(await latencies(store, queries, collection))
    medians = {label: round(statistics.median(values), 3) for label, values in timings.items()}
    return {"small_size": small, "large_size": large, "small_median_ms": medians["small"],
            "large_median_ms": medians["large"],
            "ratio": round(medians["large"] / medians["small"], 2)}


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_ms": round(statistics.median(ordered), 3),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 3)}


async def measure(store: SqlDocumentStore, size: int, ids: list[str]) -> dict[str, Any]:
    rng = random.Random(size)
    rates = []
    for _ in range(3):  # best of three rounds: other work on the machine only slows
        picked = [rng.choice(ids) for _ in range(GETS)]
        started = time.perf_counter()
        for document_id in picked:
            await store.get("people", document_id)
        rates.append(GETS / (time.perf_counter() - started))
    gets = max(rates)
    emails = [Query(filter=Eq(("email",), f"user{rng.randrange(size)}@example.com"))
              for _ in range(INDEXED_QUERIES)]
    nicks = [Query(filter=Eq(("nick",), f"nick{rng.randrange(size)}"))
             for _ in range(UNINDEXED_QUERIES)]
    await latencies(store, emails[:100])  # warm the caches and the prepared statements
    return {"size": size, "get_by_id_per_s": round(gets),
            "indexed_eq": summary(await latencies(store, emails)),
            "unindexed_eq": summary(await latencies(store, nicks))}


async def run_backend(backend: str, sizes: list[int], postgresql_url: str) -> dict[str, Any]:
    result: dict[str, Any] = {"backend": backend, "bulk_insert": {}, "scaling": []}
    async with open_store(backend, postgresql_url) as store:
        for count in (10_000, 100_000):
            rate = await timed_insert(store, f"bulk_{count}", count)
            result["bulk_insert"][str(count)] = round(rate)
            print(f"{backend}: bulk insert of {count:,} documents: {rate:,.0f} docs/s",
                  flush=True)
            await store.drop(f"bulk_{count}")
        await store.ensure_index("people", ("email",), unique=True)
        loaded, ids = 0, list[str]()
        for size in sizes:
            started = time.perf_counter()
            while loaded < size:
                batch = make_documents(loaded, min(size, loaded + LOAD_BATCH))
                await store.insert("people", batch)
                ids.extend(d["_id"] for d in batch)
                loaded += len(batch)
            await analyze(store, "people")
            print(f"{backend}: loaded {size:,} ({time.perf_counter() - started:.1f}s)",
                  flush=True)
            figures = await measure(store, size, ids)
            result["scaling"].append(figures)
            print(f"{backend}: {figures}", flush=True)
        if len(sizes) > 1:
            await store.ensure_index("people_small", ("email",), unique=True)
            await store.insert("people_small", make_documents(0, sizes[0]))
            await analyze(store, "people_small")
            result["interleaved"] = await interleaved_ratio(store, sizes[0], sizes[-1])
            print(f"{backend}: interleaved {result['interleaved']}", flush=True)
    return result


def machine() -> dict[str, Any]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                      if line.startswith("model name")), model)
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--postgresql", default=os.environ.get(
        "DOCBASE_BENCH_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results: dict[str, Any] = {"machine": machine(), "backends": [
        await run_backend(backend, sizes, args.postgresql)
        for backend in args.backends.split(",")]}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"\nmachine: {results['machine']}")
    for outcome in results["backends"]:
        print(f"\n{outcome['backend']}: bulk insert docs/s {outcome['bulk_insert']}")
        print(f"{'docs':>10} {'get/s':>8} {'indexed eq ms (p95)':>22} {'unindexed eq ms':>18}")
        for row in outcome["scaling"]:
            indexed, unindexed = row["indexed_eq"], row["unindexed_eq"]
            print(f"{row['size']:>10,} {row['get_by_id_per_s']:>8,} "
                  f"{indexed['median_ms']:>12.3f} ({indexed['p95_ms']:.3f}) "
                  f"{unindexed['median_ms']:>18.1f}")
        if "interleaved" in outcome:
            side = outcome["interleaved"]
            print(f"indexed equality measured side by side: {side['small_size']:,} docs "
                  f"{side['small_median_ms']} ms, {side['large_size']:,} docs "
                  f"{side['large_median_ms']} ms, ratio {side['ratio']}x")


if __name__ == "__main__":
    asyncio.run(main())
