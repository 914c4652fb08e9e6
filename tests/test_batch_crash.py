"""SIGKILL of ``docbase serve`` under concurrent atomic batches, then keyed retries.

Clients send atomic ``POST /batch`` requests of creates across three collections, each
with an ``Idempotency-Key``, while the whole server is killed with SIGKILL at random
moments (:data:`KILLS` times) and restarted on the same storage. After the last
restart every batch is stored whole or not at all, every acknowledged batch is stored
with the ids it was answered with, and a client that retries each unanswered batch with
its key ends with every batch applied exactly once.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tests.killing import killed_and_restarted
from tests.served_batches import client_of, stored_documents
from tests.test_crash_recovery import storage  # noqa: F401  # the fixture: both engines

KILLS = 3
CLIENTS = 4
LOAD_SECONDS = (1.0, 3.0)
COLLECTIONS = ("orders", "lines", "stock")


class Sent:
    """The batches sent: acknowledged (with their ids) and unanswered (to retry)."""

    def __init__(self) -> None:
        self.acknowledged: dict[str, set[str]] = {}
        self.unanswered: dict[str, dict[str, Any]] = {}
        self.sizes: dict[str, int] = {}


def new_batch(rng: random.Random) -> tuple[str, dict[str, Any]]:
    token = uuid.uuid4().hex
    size = rng.randint(2, 6)
    requests = [{"method": "POST", "path": f"/rest/{COLLECTIONS[n % 3]}",
                 "body": {"token": token, "size": size, "n": n}} for n in range(size)]
    return token, {"requests": requests}


async def send(sent: Sent, client: httpx.AsyncClient, token: str,
               body: dict[str, Any]) -> None:
    answer = await client.post("/batch", json=body, headers={"Idempotency-Key": token})
    assert answer.status_code == 200, answer.text
    sent.acknowledged[token] = {r["body"]["_id"] for r in answer.json()["responses"]}
    sent.unanswered.pop(token, None)


async def drive(sent: Sent, client: httpx.AsyncClient, rng: random.Random,
                stop: asyncio.Event) -> None:
    while not stop.is_set():
        token, body = new_batch(rng)
        sent.sizes[token] = len(body["requests"])
        try:
            await send(sent, client, token, body)
        except httpx.ConnectError:  # the server is down: nothing was sent
            del sent.sizes[token]
            await asyncio.sleep(0.05)
        except httpx.TransportError:  # cut off: applied or not, retried below
            sent.unanswered[token] = body


async def test_sigkilled_batches_are_whole_or_absent_and_retries_apply_once(
        tmp_path: Path, storage: str) -> None:  # noqa: F811
    sent = Sent()
    seed, served = await killed_and_restarted(
        tmp_path, storage, rounds=KILLS, clients=CLIENTS, seconds=LOAD_SECONDS,
        client_of=client_of, drive=lambda client, rng, stop: drive(sent, client, rng, stop))
    try:
        before = await stored_documents(served, COLLECTIONS)
        counts = Counter(d["token"] for d in before)
        for token, count in counts.items():  # whole or absent, after the kills
            assert count == sent.sizes[token], f"batch {token} is partly stored (seed {seed})"
        for token, ids in sent.acknowledged.items():
            assert {d["_id"] for d in before if d["token"] == token} == ids, f"seed {seed}"
        unanswered = dict(sent.unanswered)
        async with client_of(served) as client:
            for token, body in unanswered.items():
                await send(sent, client, token, body)
        after = await stored_documents(served, COLLECTIONS)
    finally:
        served.stop()
    counts = Counter(d["token"] for d in after)
    assert counts == Counter(sent.sizes), f"a batch is missing or doubled (seed {seed})"
    for token, ids in sent.acknowledged.items():
        assert {d["_id"] for d in after if d["token"] == token} == ids, f"seed {seed}"
    print(f"\n{KILLS} kills: {len(sent.sizes)} batches, {len(unanswered)} cut off and "
          f"retried, {sum(counts.values())} documents (seed {seed})")
    assert len(sent.sizes) > 5 * KILLS, "too few batches to mean anything"
