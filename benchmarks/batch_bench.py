"""A batch of 100 creates against the same 100 creates sent one by one (docs/batch.md).

For SQLite (a file) and PostgreSQL (a fresh schema), a real ``docbase serve`` is
started; one client on one keep-alive TLS connection then, per round,

- sends 100 ``POST /rest/<c>`` one after another, round robin over three collections;
- sends one ``POST /batch`` holding the same 100 creates, atomic (the default);
- sends the same batch with ``"atomic": false``.

Printed per engine: the median wall time of each over the rounds, documents per second,
and how many times faster the batch is than the requests one by one. ``--realtime``
turns the change log on first (``realtime.global``), so that every write is logged.

    .venv/bin/python benchmarks/batch_bench.py               # both engines, 7 rounds
    .venv/bin/python benchmarks/batch_bench.py --engines sqlite --rounds 3
    .venv/bin/python benchmarks/batch_bench.py --realtime
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.served_engines import engine_storage  # noqa: E402
from tests.test_serve_harness import Served, launch, run_cli  # noqa: E402

COLLECTIONS = ("orders", "lines", "stock")
SIZE = 100


def document(n: int) -> dict[str, Any]:
    return {"n": n, "name": f"item {n}", "tags": ["a", "b"], "price": n * 1.5}


def creates() -> list[tuple[str, dict[str, Any]]]:
    return [(f"/rest/{COLLECTIONS[n % 3]}", document(n)) for n in range(SIZE)]


def one_by_one(served: Served, key: str) -> float:
    started = time.perf_counter()
    for path, body in creates():
        answer = served.request("POST", path, key, json=body)
        assert answer.status_code == 201, answer.text
    return time.perf_counter() - started


def batch(served: Served, key: str, *, atomic: bool) -> float:
    requests = [{"method": "POST", "path": path, "body": body} for path, body in creates()]
    started = time.perf_counter()
    answer = served.request("POST", "/batch", key,
                            json={"requests": requests, "atomic": atomic})
    elapsed = time.perf_counter() - started
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["responses"]) == SIZE
    return elapsed


def measure(engine: str, rounds: int, *, realtime: bool = False) -> dict[str, float]:
    with TemporaryDirectory() as work, engine_storage(engine, Path(work)) as storage:
        served = launch(Path(work), "--storage", storage)
        try:
            if realtime:  # the server reads its settings again within a second
                run_cli(Path(work), "settings", "set", "--storage", storage,
                        "realtime.global", "true")
                time.sleep(1.5)
            key = served.admin_key
            one_by_one(served, key)  # warm up: tables, statements, connections
            batch(served, key, atomic=True)
            times: dict[str, list[float]] = {"one by one": [], "batch atomic": [],
                                             "batch atomic:false": []}
            for _ in range(rounds):
                times["one by one"].append(one_by_one(served, key))
                times["batch atomic"].append(batch(served, key, atomic=True))
                times["batch atomic:false"].append(batch(served, key, atomic=False))
        finally:
            served.stop()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--realtime", action="store_true",
                        help="turn the change log on (realtime.global) before serving")
    args = parser.parse_args()
    print(f"{SIZE} creates across {len(COLLECTIONS)} collections, median of "
          f"{args.rounds} rounds, one keep-alive TLS connection"
          + (", change log on" if args.realtime else ""))
    for engine in args.engines.split(","):
        medians = measure(engine, args.rounds, realtime=args.realtime)
        single = medians["one by one"]
        print(f"\n{engine}")
        for name, seconds in medians.items():
            print(f"  {name:<20} {seconds * 1000:8.1f} ms  {SIZE / seconds:8.0f} docs/s  "
                  f"x{single / seconds:5.1f}")


if __name__ == "__main__":
    main()
