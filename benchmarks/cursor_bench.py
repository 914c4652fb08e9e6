"""Benchmark of cursor paging on SQLite and PostgreSQL (a script, not a test).

Loads ``--documents`` small documents (default 1,000,000) into one collection through
the store (bulk inserts), indexes the field ``n``, then times three reads of a page of
``--page`` documents through the collection facade (the read pipeline, the list reader
and the adapter, as an HTTP list read runs them, without HTTP itself):

- the **first** page;
- the page ``--depth`` documents deep read with a **cursor** (``$after``);
- the same page read with **$skip**.

once in the default order (``_id``) and once sorted by ``n`` descending (the index
serves that order). The three are timed in interleaved rounds, so that load from other
work on the machine weighs on all alike; each figure is the median over the rounds of
each round's median, and ``cursor/first`` is the median of the per-round ratios (the
acceptance figure: at most 1.5).

    .venv/bin/python benchmarks/cursor_bench.py [--backends sqlite,postgresql]
        [--documents 1000000] [--depth 100000] [--postgresql URL]

PostgreSQL runs in a fresh schema, dropped at the end; SQLite in a temporary file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from docbase import Database
from docbase.adapters.sql import create_engine, from_url
from docbase.adapters.sql import schema as layout
from docbase.core.documents import new_document
from docbase.core.paging import cursor_of
from docbase.core.query import Query, ReadOptions, SortKey, parse_cursor

LOAD_BATCH = 50_000
ROUNDS = 7
REPEATS = 20  # reads of each kind per round (the $skip read: fewer, it is slow)
SKIP_REPEATS = 3
TIMEOUT = 600.0  # seconds per operation: indexing 1,000,000 rows on a busy machine


@contextlib.asynccontextmanager
async def open_database(backend: str, postgresql_url: str) -> AsyncIterator[Database]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            store, blobs = from_url(f"sqlite:///{directory}/bench.db",
                                    query_timeout=TIMEOUT)
            async with Database(store, blobs, name="bench") as database:
                yield database
        return
    schema = f"docbase_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgresql_url)
    assert isinstance(admin, AsyncEngine)
    async with admin.begin() as conn:
        await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        store, blobs = from_url(f"{postgresql_url}?schema={schema}", query_timeout=TIMEOUT)
        async with Database(store, blobs, name="bench") as database:
            yield database
    finally:
        async with admin.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


async def load(database: Database, count: int) -> float:
    rng = random.Random(8)
    started = time.perf_counter()
    for start in range(0, count, LOAD_BATCH):
        await database.store.insert("items", [
            new_document({"n": rng.randrange(count), "name": f"item{i}",
                          "price": round(rng.random() * 100, 2)}, "bench")
            for i in range(start, min(count, start + LOAD_BATCH))])
    await database.store.ensure_index("items", ("n",))
    store: Any = database.store
    if store.dialect.name == "postgresql":
        def analyze(conn: sa.Connection) -> None:
            number = store.backend.number(conn, "items")
            conn.execute(sa.text(f'ANALYZE "{layout.table_name(number)}"'))
        await store.backend.run(analyze, write=True)
    return time.perf_counter() - started


async def median_ms(read: Callable[[], Awaitable[Any]], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        await read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def measure(database: Database, sort: tuple[SortKey, ...], page: int,
                  depth: int) -> dict[str, float]:
    items = database.collection("items")
    first = Query(sort=sort, limit=page)
    # the cursor of the document just before the deep page (found once, with $skip)
    before = (await database.store.find("items", Query(sort=sort, skip=depth - 1, limit=1)))[0]
    deep = Query(sort=sort, limit=page, after=parse_cursor(cursor_of(before, first)))
    skipped = Query(sort=sort, skip=depth, limit=page)
    by_cursor = await items.read(deep, ReadOptions(), encoded=True)
    by_skip = await items.read(skipped, ReadOptions(), encoded=True)
    assert msgspec.json.encode(by_cursor) == msgspec.json.encode(by_skip), "pages differ"

    def reader(query: Query) -> Callable[[], Awaitable[Any]]:
        return lambda: items.read(query, ReadOptions(), encoded=True)

    rounds: dict[str, list[float]] = {"first": [], "cursor": [], "skip": [], "ratio": []}
    for _ in range(ROUNDS):
        first_ms = await median_ms(reader(first), REPEATS)
        cursor_ms = await median_ms(reader(deep), REPEATS)
        skip_ms = await median_ms(reader(skipped), SKIP_REPEATS)
        for name, value in (("first", first_ms), ("cursor", cursor_ms), ("skip", skip_ms),
                            ("ratio", cursor_ms / first_ms)):
            rounds[name].append(value)
    return {name: statistics.median(values) for name, values in rounds.items()}


async def run(backend: str, args: argparse.Namespace) -> None:
    async with open_database(backend, args.postgresql) as database:
        seconds = await load(database, args.documents)
        print(f"{backend}: loaded {args.documents:,} documents in {seconds:.0f} s")
        for label, sort in (("_id order", ()),
                            ("sorted by n (indexed)", (SortKey(("n",)),)),
                            ("sorted by n desc (indexed)", (SortKey(("n",), -1),))):
            figures = await measure(database, sort, args.page, args.depth)
            print(f"  {label:28} page of {args.page}: first {figures['first']:.2f} ms, "
                  f"cursor at {args.depth:,} {figures['cursor']:.2f} ms, $skip "
                  f"{figures['skip']:.1f} ms; cursor/first {figures['ratio']:.2f}x"
                  f" ({'holds' if figures['ratio'] <= 1.5 else 'FAILS'} 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--page", type=int, default=20)
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    for backend in args.backends.split(","):
        asyncio.run(run(backend, args))


if __name__ == "__main__":
    main()
