"""CPU per library call, to compare two checkouts of docbase (a script, not a test).

One :class:`~docbase.Database` on ``--storage`` (default ``memory://``; ``sqlite`` means
a temporary SQLite file) holds ``people``, whose schema checks four typed fields, with
200 documents. Each workload calls the library ``--count`` times, one call at a time,
after a warm-up of a tenth of that, in batches of 50, and reports the CPU microseconds
per call of its cheapest batch (``time.process_time``: what the calls cost the process;
the cheapest batch is the figure least moved by other work on a shared machine):

- ``get``: ``collection.get`` of a random document;
- ``list``: ``collection.read`` of 20 documents;
- ``create``: ``collection.insert`` of a small document;
- ``patch``: ``collection.patch`` of one field of a random document;
- ``ruled get``, ``ruled patch``: the same on a collection with access rules (a read
  scope and a field rule), as a signed-in user the rules apply to;
- ``log?``: the question every write asks, whether to log it (``db.changes.demand()``);
- ``schema``: one schema lookup outside a request (``db.schemas.get``), which each
  request made two to four times (nine for a get with access rules, over HTTPS) and now
  makes once.

Nobody consumes the change log (no realtime, webhook or export), so a write asks only
whether to log it. Run alone it prints one JSON object. With ``--compare A B`` it runs
itself under each checkout in turn (``PYTHONPATH=A``, then ``B``; the order alternates
from round to round), ``--rounds`` times, and prints each workload's median per checkout
(over the rounds) and the median of the per-round ratios B/A, with the load average
before and after::

    .venv/bin/python benchmarks/request_checks_bench.py --compare /work/main . --rounds 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import docbase
from docbase.core.auth.principal import Principal
from docbase.core.query import Query
from docbase.core.schema import parse_schema

WORKLOADS = ("get", "list", "create", "patch", "ruled get", "ruled patch", "log?", "schema")
BATCH = 50
SCHEMA = {"fields": [{"name": "name", "type": "text", "required": True},
                     {"name": "age", "type": "number", "min": 0},
                     {"name": "born", "type": "date"},
                     {"name": "active", "type": "bool"}]}
RULES = {"read": ["*"], "create": ["*"], "update": ["*"], "where": {"read": {"active": True}},
         "fields": {"age": {"read": ["*"], "write": ["*"]}}}
EDITOR = Principal(author="ed@example.com", kind="user", full_access=False, roles=("editor",))


async def run_all(storage: str, count: int) -> dict[str, float]:
    """Microseconds of CPU per call of each workload, on a fresh database."""
    async with await docbase.connect(storage) as db:
        bodies = [{"name": f"p{i}", "age": i % 90, "active": True} for i in range(200)]
        await db.schemas.put(parse_schema("people", SCHEMA))
        await db.schemas.put(parse_schema("ruled", {**SCHEMA, "access": RULES}))
        people, ruled = db.collection("people"), db.collection("ruled", EDITOR)
        ids = [d["_id"] for d in await people.insert_many(bodies)]
        ruled_ids = [d["_id"] for d in await db.collection("ruled").insert_many(bodies)]
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "get": lambda: people.get(random.choice(ids)),
            "list": lambda: people.read(Query(limit=20)),
            "create": lambda: people.insert({"name": "new", "age": 30}),
            "patch": lambda: people.patch(random.choice(ids), {"age": random.randrange(90)}),
            "ruled get": lambda: ruled.get(random.choice(ruled_ids)),
            "ruled patch": lambda: ruled.patch(random.choice(ruled_ids),
                                               {"age": random.randrange(90)}),
            "log?": db.changes.demand,
            "schema": lambda: db.schemas.get("people"),
        }
        figures = {}
        for name in WORKLOADS:
            for _ in range(count // 10):
                await calls[name]()
            batches = []
            for _ in range(count // BATCH):
                began = time.process_time()
                for _ in range(BATCH):
                    await calls[name]()
                batches.append((time.process_time() - began) / BATCH * 1e6)
            figures[name] = min(batches)
        return figures


def storage_url(storage: str, directory: str) -> str:
    """The storage URL: ``sqlite`` is a fresh file in ``directory``."""
    return f"sqlite:///{directory}/bench.db" if storage == "sqlite" else storage


def one_run(checkout: str, storage: str, count: int) -> dict[str, float]:
    """The figures of one run of this script under ``checkout``'s docbase."""
    with tempfile.TemporaryDirectory(prefix="request-checks-") as directory:
        out = subprocess.run(
            [sys.executable, __file__, "--storage", storage_url(storage, directory),
             "--count", str(count)],
            env={**os.environ, "PYTHONPATH": os.path.abspath(checkout)},
            check=True, capture_output=True, text=True).stdout
    figures: dict[str, Any] = json.loads(out.splitlines()[-1])
    source = figures.pop("docbase")
    if not source.startswith(os.path.abspath(checkout) + os.sep):
        raise SystemExit(f"{checkout}: the run imported docbase from {source}")
    return figures


def compare(first: str, second: str, storage: str, count: int, rounds: int) -> None:
    """Run both checkouts in turn and print medians and per-round ratios."""
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}; storage {storage}, {count} calls per workload")
    runs: dict[str, list[dict[str, float]]] = {first: [], second: []}
    for number in range(rounds):
        order = (first, second) if number % 2 == 0 else (second, first)
        for checkout in order:
            runs[checkout].append(one_run(checkout, storage, count))
    print(f"load after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{'workload':8} {'A µs':>8} {'B µs':>8} {'B/A':>6}  per-round B/A")
    for name in WORKLOADS:
        ratios = [b[name] / a[name] for a, b in zip(runs[first], runs[second], strict=True)]
        print(f"{name:8} {statistics.median(r[name] for r in runs[first]):8.1f} "
              f"{statistics.median(r[name] for r in runs[second]):8.1f} "
              f"{statistics.median(ratios):6.2f}  {' '.join(f'{r:.2f}' for r in ratios)}")
    print(f"A = {first}, B = {second}")


def main() -> None:
    """Run once (JSON out), or compare two checkouts."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--storage", default="memory://")
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare, args.storage, args.count, args.rounds)
    else:
        figures: dict[str, Any] = asyncio.run(run_all(args.storage, args.count))
        print(json.dumps({**figures, "docbase": docbase.__file__}))


if __name__ == "__main__":
    main()
