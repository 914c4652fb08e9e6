"""What a schema costs a write (a script, not a test).

Inserts documents one at a time through ``Collection.insert`` (the whole write
pipeline) into three collections of one database: one without a schema, one whose
schema checks six typed fields, and the same with a unique field (each insert then
also claims its value). Prints inserts per second and the median latency of each.

    .venv/bin/python benchmarks/schema_bench.py [--storage URL] [--count N] [--json]

The default storage is a temporary SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from typing import Any

import docbase
from docbase.core.schema import parse_schema

FIELDS = [
    {"name": "name", "type": "text", "required": True, "max": 100},
    {"name": "age", "type": "number", "min": 0, "max": 200},
    {"name": "born", "type": "date"},
    {"name": "active", "type": "bool", "default": True},
    {"name": "level", "type": "option", "options": ["gold", "silver"]},
    {"name": "tags", "type": "tags", "max": 10},
]
UNIQUE = [*FIELDS, {"name": "email", "type": "email", "unique": True}]


def body(n: int) -> dict[str, Any]:
    return {"name": f"person {n}", "age": n % 90, "born": "1990-04-02", "level": "gold",
            "tags": ["a", "b"], "email": f"p{n}@example.com"}


async def measure(db: docbase.Database, collection: str, count: int) -> dict[str, float]:
    people = db.collection(collection)
    latencies = []
    started = time.perf_counter()
    for n in range(count):
        one = time.perf_counter()
        await people.insert(body(n))
        latencies.append(time.perf_counter() - one)
    elapsed = time.perf_counter() - started
    return {"per_second": count / elapsed,
            "median_ms": statistics.median(latencies) * 1000}


async def run(storage: str, count: int) -> dict[str, dict[str, float]]:
    async with await docbase.connect(storage) as db:
        await db.schemas.put(parse_schema("typed", {"fields": FIELDS}))
        await db.schemas.put(parse_schema("unique", {"fields": UNIQUE}))
        return {name: await measure(db, name, count)
                for name in ("schemaless", "typed", "unique")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", help="storage URL (default: a temporary SQLite file)")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        storage = args.storage or f"sqlite:///{directory}/bench.db"
        results = asyncio.run(run(storage, args.count))
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.count} single inserts on {storage.split(':')[0]}")
    for name, figures in results.items():
        print(f"  {name:<10} {figures['per_second']:8.0f} inserts/s   "
              f"median {figures['median_ms']:.2f} ms")


if __name__ == "__main__":
    main()
