"""Benchmark of a token holder's private list against the same list read with full access.

Loads ``--documents`` notes (default 1,000,000) into a collection whose rules are
``{"read": ["*"], "private": true}``, written by 1,000 authors, so that each owns 0.1 %
of the collection, and indexes ``_createdby``. Then, in interleaved rounds (so that
load from other work on the machine weighs on both alike), it times:

- **private**: a token holder's list of its 20 newest notes, ``GET /rest/notes?max=20
  &sort=_created&dir=-1`` as the collection facade runs it (read stages, the access
  rule's filter ANDed into the query, the list reader, the adapter; no HTTP);
- **full**: the same list read by a full-access principal with the filter given
  (``q={"_createdby": EMAIL}``).

Within a round the two reads alternate, each pair for the same user (who goes first
alternates too). Each figure is the median over the rounds of each round's median;
``private/full`` is the median of the per-round throughput ratios (the acceptance
figure of issue 30: at least 0.8).

    .venv/bin/python benchmarks/access_bench.py [--backends sqlite,postgresql]
        [--documents 1000000] [--postgresql URL]

PostgreSQL runs in a fresh schema, dropped at the end; SQLite in a temporary file.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cursor_bench import LOAD_BATCH, open_database  # noqa: E402
from docbase import Database, Principal  # noqa: E402
from docbase.core.documents import new_document  # noqa: E402
from docbase.core.query import Eq, Query, ReadOptions, SortKey  # noqa: E402
from docbase.core.schema import parse_schema  # noqa: E402

AUTHORS = 1000
ROUNDS = 7
REPEATS = 30
NEWEST = (SortKey(("_created",), -1),)


def author(number: int) -> str:
    return f"user{number}@example.com"


async def load(database: Database, count: int) -> float:
    await database.schemas.put(parse_schema("notes", {
        "fields": [{"name": "title", "type": "text"}, {"name": "n", "type": "number"}],
        "access": {"read": ["*"], "private": True}}))
    started = time.perf_counter()
    for start in range(0, count, LOAD_BATCH):
        await database.store.insert("notes", [
            new_document({"title": f"note {i}", "n": i}, author(i % AUTHORS))
            for i in range(start, min(count, start + LOAD_BATCH))])
    await database.store.ensure_index("notes", ("_createdby",))
    return time.perf_counter() - started


async def measure(database: Database) -> dict[str, float]:
    rng = random.Random(30)

    async def private(email: str) -> None:
        notes = database.collection("notes", Principal(author=email, kind="user",
                                                       full_access=False))
        answer = await notes.read(Query(sort=NEWEST, limit=20), ReadOptions(), encoded=True)
        assert len(answer) == 20

    async def full(email: str) -> None:
        query = Query(filter=Eq(("_createdby",), email), sort=NEWEST, limit=20)
        answer = await database.collection("notes").read(query, ReadOptions(), encoded=True)
        assert len(answer) == 20

    rounds: dict[str, list[float]] = {"private": [], "full": [], "ratio": []}
    for number in range(ROUNDS):
        times: dict[str, list[float]] = {"private": [], "full": []}
        for repeat in range(REPEATS):  # the same user both ways, in alternating order
            email = author(rng.randrange(AUTHORS))
            pair = [("private", private), ("full", full)]
            for name, read in pair if (number + repeat) % 2 else pair[::-1]:
                started = time.perf_counter()
                await read(email)
                times[name].append((time.perf_counter() - started) * 1000)
        private_ms, full_ms = (statistics.median(times[k]) for k in ("private", "full"))
        rounds["private"].append(private_ms)
        rounds["full"].append(full_ms)
        rounds["ratio"].append(full_ms / private_ms)  # throughput private / full
    return {name: statistics.median(values) for name, values in rounds.items()}


async def run(backend: str, args: argparse.Namespace) -> None:
    async with open_database(backend, args.postgresql) as database:
        seconds = await load(database, args.documents)
        print(f"{backend}: loaded {args.documents:,} notes of {AUTHORS} authors "
              f"in {seconds:.0f} s")
        figures = await measure(database)
        ratio = figures["ratio"]
        print(f"  private list of 20 newest: {1000 / figures['private']:.0f} reads/s "
              f"({figures['private']:.2f} ms); full access, same filter: "
              f"{1000 / figures['full']:.0f} reads/s ({figures['full']:.2f} ms); "
              f"private/full {ratio:.2f}x ({'holds' if ratio >= 0.8 else 'FAILS'} 0.8x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    for backend in args.backends.split(","):
        asyncio.run(run(backend, args))


if __name__ == "__main__":
    main()
