"""What keeping an ``Idempotency-Key``'s answer costs, per engine (docs/benchmarks.md).

A keyed write claims the key (inserts its record), runs, then stores its answer
(``remember``) in the same transaction where the store has them. Here, per engine and
in alternating rounds: the claim alone, and the claim with the answer of a
1,000-document insert (~235 kB of JSON) stored, each in its own transaction (MongoDB:
none); the difference is what storing the answer costs.

    .venv/bin/python benchmarks/idempotency_bench.py          # every engine, 31 rounds
    .venv/bin/python benchmarks/idempotency_bench.py --engines sqlite --rounds 11
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import docbase  # noqa: E402
from docbase.core.batch.unit import atomically  # noqa: E402
from docbase.core.documents import new_document  # noqa: E402
from docbase.core.idempotency import StoredAnswer, claim, remember  # noqa: E402
from tests.served_engines import engine_storage  # noqa: E402

DOCUMENT = {"name": "Joe", "email": "joe@example.com", "age": 42, "tags": ["a", "b"]}
ANSWER = StoredAnswer(201, msgspec.json.encode(
    [new_document(dict(DOCUMENT, n=n), "api") for n in range(1000)]),
    (("content-type", "application/json"),))


async def measure(url: str, rounds: int) -> tuple[float, float]:
    """Median seconds of a claim, and of a claim with the answer stored."""
    async with await docbase.connect(url) as db:
        def unit() -> contextlib.AbstractAsyncContextManager[object]:
            if getattr(db.store, "transactional", False):
                return atomically(db.store, None)
            return contextlib.nullcontext()

        async def keyed(*, answered: bool) -> float:
            started = time.perf_counter()
            async with unit():
                claimed = await claim(db, "apikey:bench", uuid.uuid4().hex, "fingerprint")
                if answered:
                    await remember(db, claimed, ANSWER)
            return time.perf_counter() - started

        await keyed(answered=True)
        claims, answered = [], []
        for _ in range(rounds):
            claims.append(await keyed(answered=False))
            answered.append(await keyed(answered=True))
        return statistics.median(claims), statistics.median(answered)


def on_engine(engine: str, rounds: int) -> str:
    """One line of figures for ``engine``, on a fresh database of its own."""
    with TemporaryDirectory() as directory, engine_storage(engine, Path(directory)) as url:
        claimed, answered = asyncio.run(measure(url, rounds))
    return (f"{engine:<11} claim {claimed * 1e3:6.2f} ms   claim and answer "
            f"{answered * 1e3:6.2f} ms   the answer {(answered - claimed) * 1e3:6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="memory,sqlite,postgresql,mongo",
                        help="comma-separated: memory, sqlite, postgresql, mongo")
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    print(f"answer of 1,000 documents: {len(ANSWER.body):,} bytes; "
          f"{args.rounds} rounds, medians", flush=True)
    for line in (on_engine(engine, args.rounds) for engine in args.engines.split(",")):
        print(line, flush=True)


if __name__ == "__main__":
    main()
