"""The remote client's cost over raw httpx, against one ``docbase serve`` (SQLite), in one run.

Two pairs, each measured in alternating rounds (so drift in the machine's load falls on
both sides alike), the median round reported. A round of ``insert_many`` is one call
by default: with five calls a round and five rounds, runs of the same code on a shared
two-core machine ranged from 0.53x to 1.31x; call by call over 41 rounds they stayed
within 0.1 of each other.

- ``get``: ``await db.collection("bench").get(id)`` against a raw ``httpx`` GET of the
  same URL (``?metafields=true``: the same answer), on the same kind of pooled client;
- ``insert_many``: ``insert_many`` of 1,000 documents against the raw POST of the same
  array.

The issue's targets (issue 34): a remote ``get`` at most 1.3x the raw GET,
``insert_many`` at most 1.2x the raw POST.

    .venv/bin/python benchmarks/client_bench.py            # ~1 minute
    .venv/bin/python benchmarks/client_bench.py --gets 500 --batches 5 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import docbase  # noqa: E402
from tests.test_serve_harness import serving  # noqa: E402

DOCUMENT = {"name": "Joe", "email": "joe@example.com", "age": 42, "tags": ["a", "b"]}


async def timed(count: int, call: Callable[[], Awaitable[object]]) -> float:
    """Seconds per call of ``count`` calls made one after another."""
    start = time.perf_counter()
    for _ in range(count):
        await call()
    return (time.perf_counter() - start) / count


async def compare(rounds: int, count: int, raw: Callable[[], Awaitable[object]],
                  client: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """Median seconds per call of ``raw`` and of ``client``, rounds alternating."""
    await raw()
    await client()  # both connections open before timing
    raws, clients = [], []
    for _ in range(rounds):
        raws.append(await timed(count, raw))
        clients.append(await timed(count, client))
    return statistics.median(raws), statistics.median(clients)


def line(name: str, raw: float, client: float, target: float) -> str:
    ratio = client / raw
    verdict = "within" if ratio <= target else "OVER"
    return (f"{name:<12} raw {raw * 1e3:8.3f} ms   client {client * 1e3:8.3f} ms   "
            f"{ratio:.2f}x ({verdict} the {target}x target)")


async def run(url: str, key: str, cert: Path, args: argparse.Namespace) -> None:
    headers = {"x-apikey": key}
    async with (httpx.AsyncClient(base_url=url, verify=str(cert), headers=headers,
                                  timeout=60) as raw,
                await docbase.connect(url, apikey=key, verify=cert, timeout=60) as db):
        bench = db.collection("bench")
        document_id = (await bench.insert(DOCUMENT))["_id"]

        async def raw_get() -> object:
            response = await raw.get(f"/rest/bench/{document_id}",
                                     params={"metafields": "true"})
            response.raise_for_status()
            return response.json()

        get = await compare(args.rounds, args.gets, raw_get, lambda: bench.get(document_id))
        batch = [dict(DOCUMENT, n=i) for i in range(1000)]

        async def raw_post() -> object:
            response = await raw.post("/rest/bench", json=batch)
            response.raise_for_status()
            return response.json()

        async def raw_keyed_post() -> object:  # what the client sends: a key to retry with
            response = await raw.post("/rest/bench", json=batch,
                                      headers={"idempotency-key": uuid.uuid4().hex})
            response.raise_for_status()
            return response.json()

        many = await compare(args.rounds, args.batches, raw_post,
                             lambda: bench.insert_many(batch))
        keyed = await compare(args.rounds, args.batches, raw_keyed_post,
                              lambda: bench.insert_many(batch))
    print(line("get", *get, 1.3))
    print(line("insert_many", *many, 1.2))
    print(line("insert_many", *keyed, 1.2) + " against a raw POST with an Idempotency-Key")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gets", type=int, default=200, help="GETs per round")
    parser.add_argument("--batches", type=int, default=1, help="1,000-document POSTs per round")
    parser.add_argument("--rounds", type=int, default=41)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, serving(Path(directory)) as served:
        print(f"docbase serve (SQLite) at {served.url}; {args.rounds} rounds, median round")
        asyncio.run(run(served.url, served.admin_key, served.data_dir / "cert.pem", args))


if __name__ == "__main__":
    main()
