"""What a shorter trust in "is the change log consumed?" costs writes (docs/benchmarks.md).

Every write asks :class:`docbase.core.changes.demand.LogDemand` whether to log it; the
answer is read from the store again once it is older than ``DEMAND_SECONDS`` (three
fresh reads: settings, webhooks, capture leases). A registration (realtime switched on,
a webhook added) waits a little longer than that before it returns. Here, per engine,
one writer inserts one document at a time with nobody consuming the log, in
alternating rounds of ``--seconds`` with the window at each of ``--windows``; it prints
the median inserts per second of each window and how many times the answer was read.

    .venv/bin/python benchmarks/log_demand_bench.py [--engines sqlite,postgresql]
        [--windows 0.5,0.1] [--rounds 7] [--seconds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import docbase  # noqa: E402
from docbase.core.changes import demand  # noqa: E402
from tests.served_engines import engine_storage  # noqa: E402


async def _round(db: docbase.Database, seconds: float) -> tuple[float, int]:
    """Inserts per second for ``seconds``, and how many times the answer was read."""
    reads = [0]
    counted = demand.LogDemand._consumed

    async def counting(self: demand.LogDemand) -> bool:
        reads[0] += 1
        return await counted(self)

    demand.LogDemand._consumed = counting  # type: ignore[method-assign]
    try:
        people = db.collection("people")
        done = 0
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            await people.insert({"name": "Joe", "n": done})
            done += 1
        return done / (time.perf_counter() - started), reads[0]
    finally:
        demand.LogDemand._consumed = counted  # type: ignore[method-assign]


async def bench(engine: str, url: str, windows: list[float], rounds: int,
                seconds: float) -> None:
    async with await docbase.connect(url) as db:
        rates: dict[float, list[float]] = {w: [] for w in windows}
        reads: dict[float, list[int]] = {w: [] for w in windows}
        await _round(db, 0.5)  # warm-up
        for number in range(rounds):
            for window in windows if number % 2 == 0 else list(reversed(windows)):
                demand.DEMAND_SECONDS = window
                rate, read = await _round(db, seconds)
                rates[window].append(rate)
                reads[window].append(read)
        for window in windows:
            print(f"{engine:<11} window {window:>4} s: {statistics.median(rates[window]):8.0f} "
                  f"inserts/s, answer read {statistics.median(reads[window]):4.0f} times "
                  f"in {seconds} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--windows", default="0.5,0.1")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    windows = [float(w) for w in args.windows.split(",")]
    for engine in args.engines.split(","):
        with TemporaryDirectory(prefix="docbase-demand-bench-") as tmp, \
                engine_storage(engine, Path(tmp)) as url:
            asyncio.run(bench(engine, url, windows, args.rounds, args.seconds))


if __name__ == "__main__":
    main()
