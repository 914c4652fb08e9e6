"""Soak: a mixed load on ``docbase serve`` for a long time, watching memory and descriptors.

For each engine (SQLite in the data directory, PostgreSQL in a fresh schema) it starts
the real ``docbase serve`` over TLS and runs ``--clients`` concurrent HTTPS clients for
``--minutes``: reads by id (40%), queries with a filter and a sort (20%), creates and
updates (25%) and deletes (15%), deletes keeping the collection near its starting size.
Every ``--every`` seconds it samples the server's resident memory and open file
descriptors (main process plus workers). It prints, per engine: operations done,
errors (any non-2xx answer or transport error), and memory and descriptors after the
warm-up (the first sample past ``--warmup`` seconds), at the end, their growth, and the
growth over the second half alone (a leak keeps growing there; caches do not)::

    .venv/bin/python benchmarks/soak.py --minutes 5                 # both engines
    .venv/bin/python benchmarks/soak.py --minutes 10 --engines sqlite --json soak.json

Not a test: figures only (``docs/reliability.md`` quotes them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.backends import postgresql_schema  # noqa: E402
from tests.test_serve_harness import Served, child_processes, launch  # noqa: E402

COLLECTION = "/rest/soak"
SEED_DOCUMENTS = 500


@dataclass
class Sample:
    seconds: float
    rss_kib: int
    fds: int


@dataclass
class Outcome:
    engine: str
    minutes: float
    operations: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)


def measure(served: Served) -> tuple[int, int]:
    """Resident memory (KiB) and open descriptors of the server and its workers."""
    rss = fds = 0
    for pid in (served.process.pid, *child_processes(served.process.pid)):
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{pid}/status").read_text()
            rss += int(next(line.split()[1] for line in status.splitlines()
                            if line.startswith("VmRSS:")))
            fds += len(list(Path(f"/proc/{pid}/fd").iterdir()))
    return rss, fds


async def client_loop(client: httpx.AsyncClient, ids: list[str], outcome: Outcome,
                      rng: random.Random, deadline: float) -> None:
    """Run random operations until ``deadline``; count every failure as an error."""
    while time.monotonic() < deadline:
        choice = rng.random()
        try:
            if choice < 0.4 and ids:
                reply = await client.get(f"{COLLECTION}/{rng.choice(ids)}")
            elif choice < 0.6:
                reply = await client.get(COLLECTION, params={
                    "q": json.dumps({"n": {"$gte": rng.randrange(100)}}),
                    "h": json.dumps({"$orderby": {"n": -1}, "$max": 20})})
            elif choice < 0.75 or len(ids) < SEED_DOCUMENTS // 2:
                reply = await client.post(COLLECTION, json={"n": rng.randrange(100),
                                                            "text": "x" * rng.randrange(500)})
                if reply.status_code == 201:
                    ids.append(reply.json()["_id"])
            elif choice < 0.85 and ids:
                reply = await client.put(f"{COLLECTION}/{rng.choice(ids)}",
                                         json={"$inc": {"n": 1}})
            elif ids:
                reply = await client.delete(f"{COLLECTION}/{ids.pop(rng.randrange(len(ids)))}")
            else:
                continue
            kind = None if reply.is_success else f"HTTP {reply.status_code}"
        except httpx.HTTPError as exc:
            kind = type(exc).__name__
        outcome.operations += 1
        if kind is not None:
            outcome.errors += 1
            outcome.error_kinds[kind] = outcome.error_kinds.get(kind, 0) + 1


async def soak(engine: str, storage: str, work: Path, args: argparse.Namespace) -> Outcome:
    outcome = Outcome(engine, args.minutes)
    served = await asyncio.to_thread(launch, work, "--storage", storage)
    try:
        async with httpx.AsyncClient(base_url=served.url, verify=served.ssl_context(),
                                     timeout=30, headers={"x-apikey": served.admin_key},
                                     limits=httpx.Limits(max_connections=args.clients),
                                     ) as client:
            seeded = await client.post(COLLECTION, json=[{"n": i % 100, "text": "seed"}
                                                         for i in range(SEED_DOCUMENTS)])
            seeded.raise_for_status()
            rng = random.Random(args.seed)
            # each client deletes only its own documents, so none is deleted twice
            owned = [[d["_id"] for d in seeded.json()][i::args.clients]
                     for i in range(args.clients)]
            start = time.monotonic()
            deadline = start + args.minutes * 60
            clients = [asyncio.create_task(client_loop(client, owned[i], outcome,
                                                       random.Random(rng.random()), deadline))
                       for i in range(args.clients)]
            while time.monotonic() < deadline:
                rss, fds = measure(served)
                outcome.samples.append(Sample(round(time.monotonic() - start, 1), rss, fds))
                await asyncio.sleep(min(args.every, max(0.0, deadline - time.monotonic())))
            await asyncio.gather(*clients)
            rss, fds = measure(served)
            outcome.samples.append(Sample(round(time.monotonic() - start, 1), rss, fds))
    finally:
        await asyncio.to_thread(served.stop)
    return outcome


def report(outcome: Outcome, warmup: float) -> None:
    samples = outcome.samples
    base = next((s for s in samples if s.seconds >= warmup), samples[0])
    middle = next(s for s in samples if s.seconds >= samples[-1].seconds / 2)
    end = samples[-1]
    rate = outcome.operations / max(end.seconds, 1)
    print(f"{outcome.engine}: {outcome.minutes:g} min, {outcome.operations} operations "
          f"({rate:.0f}/s), {outcome.errors} errors {outcome.error_kinds or ''}")
    print(f"  memory (RSS, server + workers): {base.rss_kib / 1024:.1f} MiB at "
          f"{base.seconds:.0f} s -> {end.rss_kib / 1024:.1f} MiB at {end.seconds:.0f} s: "
          f"{(end.rss_kib - base.rss_kib) / 1024:+.1f} MiB; second half "
          f"{(end.rss_kib - middle.rss_kib) / 1024:+.1f} MiB; peak "
          f"{max(s.rss_kib for s in samples) / 1024:.1f} MiB")
    print(f"  open descriptors: {base.fds} -> {end.fds} ({end.fds - base.fds:+d}); second "
          f"half {end.fds - middle.fds:+d}; peak {max(s.fds for s in samples)}", flush=True)


@contextlib.asynccontextmanager
async def storage_for(engine: str, work: Path) -> AsyncIterator[str]:
    if engine == "sqlite":
        yield f"sqlite:///{work}/soak.db"
    else:
        async with postgresql_schema() as url:
            yield url


async def run(args: argparse.Namespace) -> list[Outcome]:
    outcomes = []
    for engine in args.engines.split(","):
        with tempfile.TemporaryDirectory(prefix=f"docbase-soak-{engine}-") as tmp:
            async with storage_for(engine, Path(tmp)) as storage:
                outcomes.append(await soak(engine, storage, Path(tmp), args))
        report(outcomes[-1], args.warmup)
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="per engine")
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=30.0,
                        help="seconds before the baseline sample")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="FILE", help="also write the samples as JSON")
    args = parser.parse_args()
    outcomes = asyncio.run(run(args))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n")


if __name__ == "__main__":
    main()
