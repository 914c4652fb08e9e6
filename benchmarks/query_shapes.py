"""Each shape of query users send, timed against get-by-id on the same store (a script).

For each SQL store it loads ``--documents`` documents (default 1,000,000) into
collection ``people`` through the store's bulk insert, then runs every shape of
``docbase/testing/query_shapes.py`` (written as a user writes ``q`` and ``h``; the
plan check ``tests/test_query_plans.py`` runs the same ones) in process, through the
library (``store.find`` / ``store.count`` / ``store.get``, no HTTP), and prints each
shape's median latency and its ratio to the median get-by-id of the same store.

Indexes form as for a user of ``docbase serve``: the store indexes by itself
(``limits.auto_index*``, ``docs/sql-adapter.md``), every shape is run ``--warmup``
times (5) first and the background indexing is waited for, three times over (a
shape's indexes form in turn: its condition's, its sort's, their composite). The
threshold of automatic indexes is lowered to ``--warmup`` finds (in a day, not 20 in
5 minutes: a round of scans of 1,000,000 documents takes minutes) and their size cap raised to the
collection's (``--indexes declared`` declares the queried fields with ``ensure_index``
instead, as ``index: true`` does). The plan of each shape is printed with ``--plans``.

``--served`` times them as a user of ``docbase serve`` meets them (the method of
issue 31's acceptance): after the same loading and warm-up, one ``docbase serve`` (one
worker, plain HTTP behind a trusted proxy header, ``served_process.py``) serves the
store, and each shape is the ``GET /rest/people?q=...&h=...`` a client sends (a count:
``&totals=true&count=true``), over one kept-alive connection, against ``GET
/rest/people/ID`` on the same server.

    .venv/bin/python benchmarks/query_shapes.py [--documents 1000000]
        [--stores sqlite,postgresql] [--indexes auto|declared] [--runs 200] [--plans]
        [--skip-scans] [--served [--port 8470]]
        [--postgresql postgresql://postgres@127.0.0.1:5432/test]

SQLite lives in a temporary directory; PostgreSQL in a fresh schema, dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from portability_bench import _psql, drop, store_url
from served_process import PROXY, serve_process

from docbase.core.documents import new_document
from docbase.core.query import Query
from docbase.core.schemes import open_stores
from docbase.core.settings import AutoIndexing
from docbase.testing.query_shapes import INDEXED, Shape, body, owner, shapes

BULK = 20_000
INDEXES_PER_SHAPE = 3
COLLECTION = "people"
KEY = "query-shapes-bench-admin-key-0123456789"
HEADERS = {**PROXY, "x-apikey": KEY}


async def load(store: Any, size: int) -> list[str]:
    """Insert ``size`` documents; return a sample of their ids."""
    ids: list[str] = []
    for start in range(0, size, BULK):
        documents = [new_document(body(i), owner(i)) for i in range(start, min(size, start + BULK))]
        ids.extend(d["_id"] for d in documents[::997])
        await store.insert(COLLECTION, documents)
    return ids


def more_runs(timings: list[float], runs: int, started: float) -> bool:
    """Whether to time once more: ``runs`` in all, fewer past 3 s, at least 5."""
    return len(timings) < runs and (len(timings) < 5 or time.perf_counter() - started < 3)


async def timed(call: Any, runs: int) -> float:
    """Median milliseconds of ``runs`` awaits of ``call()`` (fewer past 3 s, at least 5)."""
    timings: list[float] = []
    started = time.perf_counter()
    while more_runs(timings, runs, started):
        began = time.perf_counter()
        await call()
        timings.append((time.perf_counter() - began) * 1000)
    return statistics.median(timings)


async def measure(url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Load, let the indexes form, and time every shape against get-by-id."""
    # (every find of a shape counts towards its index; the default threshold, 20 within
    # 300 s, is never reached by shapes that scan 1,000,000 documents for seconds each)
    auto = (AutoIndexing(queries=args.warmup, window=86_400, max_documents=args.documents)
            if args.indexes == "auto" else None)
    # a scan of 1,000,000 documents takes longer than limits.query_timeout (5 s)
    store, _ = open_stores(url, auto_index=auto, query_timeout=600)
    async with store:
        began = time.perf_counter()
        ids = await load(store, args.documents)
        print(f"  loaded {args.documents:,} in {time.perf_counter() - began:.0f} s", flush=True)
        cases = [(shape.name, shape.kind, shape.query) for shape in shapes(args.documents)
                 if not (args.skip_scans and shape.scans)]
        if args.indexes == "declared":
            for path in INDEXED:
                await store.ensure_index(COLLECTION, tuple(path.split(".")))
        analyze(url, args.postgresql)
        began = time.perf_counter()
        idle = getattr(store, "auto_indexer", None)
        # a shape's indexes form one after another (the condition's path, the sort's,
        # then the composite of the two), each after --warmup finds still lacking it
        for _ in range(INDEXES_PER_SHAPE if idle is not None else 1):
            for _ in range(args.warmup):  # (a scan per shape and round at first)
                for _name, kind, query in cases:
                    await (store.find(COLLECTION, query) if kind == "find"
                           else store.count(COLLECTION, query.filter))
                await asyncio.sleep(0)
            if idle is not None:
                await idle.idle()
        if idle is not None:
            analyze(url, args.postgresql)  # the statistics of the indexes' expressions
        print(f"  warmed up in {time.perf_counter() - began:.0f} s", flush=True)
        if args.served:
            explain = store.explain  # type: ignore[attr-defined]  # SQL stores only
            plans = {name: await explain(COLLECTION, query if kind == "find" else query.filter)
                     for name, kind, query in cases} if args.plans else {}
        else:
            return await in_process(store, args, ids, cases)
    return served_rows(url, args, ids, plans)


def analyze(url: str, postgresql: str) -> None:
    """Vacuum and analyze the loaded PostgreSQL schema, as its autovacuum would.

    A server with autovacuum on (PostgreSQL's default) vacuums and analyzes a table
    within a minute of a bulk load; this machine's runs with it off. Without statistics
    the planner guesses how many documents a condition matches (it walked the key index
    for ``$or``: 61 ms at 1,000,000), and without a visibility map an index-only scan
    reads every row's page too.
    """
    if "schema=" not in url:
        return
    schema = url.rsplit("schema=", 1)[1]
    tables = subprocess.run(
        ["psql", postgresql, "-Atc",
         f"SELECT tablename FROM pg_tables WHERE schemaname = '{schema}'"],
        check=True, capture_output=True, text=True).stdout.split()
    for table in tables:
        _psql(postgresql, f'VACUUM ANALYZE "{schema}"."{table}"')


async def in_process(store: Any, args: argparse.Namespace, ids: list[str],
                     cases: Sequence[tuple[str, str, Query]]) -> list[dict[str, Any]]:
    """Time every shape and get-by-id through the library."""
    sample = iter(ids * (args.runs // len(ids) + 1))
    get = await timed(lambda: store.get(COLLECTION, next(sample)), args.runs)
    rows = [{"shape": "get by id", "ms": get, "ratio": 1.0}]
    for name, kind, query in cases:
        async def run(kind: str = kind, query: Query = query) -> Any:
            if kind == "find":
                return await store.find(COLLECTION, query)
            return await store.count(COLLECTION, query.filter)

        found = await run()
        ms = await timed(run, args.runs)
        rows.append({"shape": name, "ms": ms, "ratio": ms / get,
                     "found": found if isinstance(found, int) else len(found)})
        if args.plans:
            plan = await store.explain(COLLECTION, query if kind == "find" else query.filter)
            print(f"  {name}:\n    " + plan.replace("\n", "\n    "), flush=True)
    return rows


def timed_requests(connection: http.client.HTTPConnection, paths: list[str],
                   runs: int) -> tuple[float, int]:
    """Median milliseconds of GETs of ``paths`` in turn (as :func:`timed`); documents found."""
    timings: list[float] = []
    found = 0
    started = time.perf_counter()
    turn = 0
    while more_runs(timings, runs, started):
        began = time.perf_counter()
        connection.request("GET", paths[turn % len(paths)], headers=HEADERS)
        answer = connection.getresponse()
        raw = answer.read()
        timings.append((time.perf_counter() - began) * 1000)
        if answer.status != 200:
            raise SystemExit(f"GET {paths[turn % len(paths)]}: {answer.status} {raw[:300]!r}")
        turn += 1
        if turn == 1:
            body = json.loads(raw)
            found = (body["totals"]["count"] if isinstance(body, dict) and "totals" in body
                     else len(body) if isinstance(body, list) else 1)
    return statistics.median(timings), found


def shape_path(shape: Shape) -> str:
    """The ``GET /rest`` a user sends for ``shape`` (a count: ``totals`` and ``count``)."""
    params = {"q": json.dumps(shape.q)}
    if shape.h:
        params["h"] = json.dumps(shape.h)
    if shape.kind == "count":
        params |= {"totals": "true", "count": "true"}
    return f"/rest/{COLLECTION}?" + urllib.parse.urlencode(params)


def served_rows(url: str, args: argparse.Namespace, ids: list[str],
                plans: dict[str, str]) -> list[dict[str, Any]]:
    """Time every shape and get-by-id over HTTP, one ``docbase serve`` on the loaded store."""
    directory = Path(tempfile.mkdtemp(prefix="query-shapes-served-"))
    with serve_process(directory, args.port, KEY, storage=url) as (_base, _pid):
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=600)
        cases = [shape for shape in shapes(args.documents)
                 if not (args.skip_scans and shape.scans)]
        for _ in range(args.warmup):  # the server's own caches and statements
            for shape in cases:
                timed_requests(connection, [shape_path(shape)], 1)
        get, _ = timed_requests(connection, [f"/rest/{COLLECTION}/{i}" for i in ids],
                                args.runs)
        rows = [{"shape": "get by id", "ms": get, "ratio": 1.0}]
        for shape in cases:
            ms, found = timed_requests(connection, [shape_path(shape)], args.runs)
            rows.append({"shape": shape.name, "ms": ms, "ratio": ms / get, "found": found})
            if shape.name in plans:
                print(f"  {shape.name}:\n    " + plans[shape.name].replace("\n", "\n    "),
                      flush=True)
        connection.close()
    return rows


def main() -> None:
    """Print, per store, each shape's median latency and its ratio to get-by-id."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--indexes", choices=("auto", "declared"), default="auto")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--plans", action="store_true")
    parser.add_argument("--skip-scans", action="store_true",
                        help="leave out the shapes marked scans=True (none now)")
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--served", action="store_true",
                        help="time over HTTP, through one docbase serve on the loaded store")
    parser.add_argument("--port", type=int, default=8470)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for backend in args.stores.split(","):
            print(f"{backend}:", flush=True)
            url = store_url(backend, Path(directory), "shapes", args.postgresql)
            try:
                results[backend] = rows = asyncio.run(measure(url, args))
            finally:
                drop(url, args.postgresql)
            for row in rows:
                found = f"  ({row['found']} found)" if "found" in row else ""
                print(f"  {row['shape']:<44} {row['ms']:9.3f} ms {row['ratio']:8.1f}x{found}",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
