"""SIGKILL of ``docbase serve`` at random moments loses no acknowledged write.

Concurrent clients create, update, delete and bulk-insert over HTTPS while the whole
server (main process and workers) is killed with SIGKILL at a random moment, restarted
on the same storage, and killed again, :data:`KILLS` times. The :class:`Ledger` records
every write the server acknowledged (a 2xx answer received) and every one it was sent
without answering. After the last restart, every acknowledged write must be stored
with its acknowledged content, every acknowledged delete gone, an unanswered write
either done or not done (never anything else), and every bulk insert all or nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.killing import killed_and_restarted
from tests.served_engines import engine_storage
from tests.test_serve_harness import Served

KILLS = 5
CLIENTS = 6
LOAD_SECONDS = (1.0, 3.0)
"""Each kill comes at a random moment within this many seconds of load."""
ITEMS = "/rest/items"
Document = dict[str, Any]


def _unstamped(document: Document) -> Document:
    """A document without its change time (which an unanswered update's outcome lacks)."""
    return {k: v for k, v in document.items() if k != "_changed"}


class Ledger:
    """What the server acknowledged, and what it was sent without answering."""

    def __init__(self) -> None:
        self.acknowledged: dict[str, Document] = {}
        """Each document as the last acknowledged write of it returned it."""
        self.unanswered: dict[str, Document | None] = {}
        """What an unanswered update (a document) or delete (``None``) would leave."""
        self.deleted: set[str] = set()
        self.sent: dict[str, Document] = {}
        """Every created document's body, by its ``token``."""
        self.batches: dict[str, int] = {}
        """Unanswered bulk inserts: ``batch`` token and size (acknowledged ones are in
        :attr:`acknowledged`, document by document)."""
        self.idle: list[str] = []
        """Ids whose stored state is known and that no client is writing now."""
        self.writes = 0
        """Acknowledged writes (each document of a bulk insert counts)."""
        self.lost_answers = 0
        """Writes sent on a connection the kill cut before the answer came."""

    def created(self, document: Document) -> None:
        self.acknowledged[document["_id"]] = document
        self.idle.append(document["_id"])
        self.writes += 1

    def check(self, stored: dict[str, Document]) -> list[str]:
        """Compare the stored documents with the ledger; return every discrepancy."""
        problems = []
        for document_id, acknowledged in self.acknowledged.items():
            found = stored.get(document_id)
            if document_id in self.unanswered:
                outcome = self.unanswered[document_id]
                allowed = [_unstamped(acknowledged),
                           None if outcome is None else _unstamped(outcome)]
                if (None if found is None else _unstamped(found)) not in allowed:
                    problems.append(f"{document_id}: {found} is neither of {allowed}")
            elif found != acknowledged:
                problems.append(f"{document_id}: stored {found}, acknowledged {acknowledged}")
        problems += [f"{i}: deleted, yet stored" for i in self.deleted if i in stored]
        for document_id, found in stored.items():
            body = self.sent.get(found.get("token", ""))
            if document_id not in self.acknowledged and (
                    body is None or {k: found.get(k) for k in body} != body):
                problems.append(f"{document_id}: stored {found}, never sent as such")
        counts: dict[str, int] = {}
        for found in stored.values():
            if "batch" in found:
                counts[found["batch"]] = counts.get(found["batch"], 0) + 1
        problems += [f"bulk insert {batch}: {counts.get(batch)} of {size} stored"
                     for batch, size in self.batches.items() if counts.get(batch, 0) not in
                     (0, size)]
        return problems


async def _write(ledger: Ledger, client: httpx.AsyncClient, rng: random.Random) -> None:
    """Send one random write and record what the server answered."""
    choice = rng.random()
    if choice < 0.5 and ledger.idle:
        document_id = ledger.idle.pop(rng.randrange(len(ledger.idle)))
        before = ledger.acknowledged[document_id]
        if choice < 0.4:
            token = uuid.uuid4().hex
            ledger.unanswered[document_id] = {
                **_unstamped(before), "n": before["n"] + 1, "last": token,
                "_version": before["_version"] + 1}
            reply = await client.put(f"{ITEMS}/{document_id}",
                                     json={"$inc": {"n": 1}, "last": token})
            reply.raise_for_status()
            ledger.acknowledged[document_id] = reply.json()
            ledger.idle.append(document_id)
        else:
            ledger.unanswered[document_id] = None
            reply = await client.delete(f"{ITEMS}/{document_id}")
            reply.raise_for_status()
            assert reply.json() == {"result": [document_id]}
            del ledger.acknowledged[document_id]
            ledger.deleted.add(document_id)
        del ledger.unanswered[document_id]
        ledger.writes += 1
        return
    payload = "".join(rng.choices("abcdefghij", k=rng.randrange(10, 200)))
    if choice < 0.8:
        body = {"token": uuid.uuid4().hex, "n": 0, "payload": payload}
        ledger.sent[body["token"]] = body
        reply = await client.post(ITEMS, json=body)
        reply.raise_for_status()
        ledger.created(reply.json())
        return
    batch = uuid.uuid4().hex
    bodies = [{"token": uuid.uuid4().hex, "n": 0, "payload": payload, "batch": batch,
               "index": i} for i in range(rng.randrange(2, 20))]
    ledger.sent.update((body["token"], body) for body in bodies)
    ledger.batches[batch] = len(bodies)
    reply = await client.post(ITEMS, json=bodies)
    reply.raise_for_status()
    del ledger.batches[batch]
    for document in reply.json():
        ledger.created(document)


async def _drive(ledger: Ledger, client: httpx.AsyncClient, rng: random.Random,
                 stop: asyncio.Event) -> None:
    """Write until told to stop; a write the dying server did not answer is recorded."""
    while not stop.is_set():
        try:
            await _write(ledger, client, rng)
        except httpx.ConnectError:  # the server is down: nothing was sent
            await asyncio.sleep(0.05)
        except httpx.TransportError:
            ledger.lost_answers += 1


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The storage URL the killed servers share."""
    with engine_storage(request.param, tmp_path) as url:
        yield url


@contextlib.asynccontextmanager
async def _client(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, verify=served.ssl_context(), timeout=30,
                                 headers={"x-apikey": served.admin_key}) as client:
        yield client


async def _stored(served: Served) -> dict[str, Document]:
    found: dict[str, Document] = {}
    async with _client(served) as client:
        while True:
            page = await client.get(ITEMS, params={"metafields": "true", "max": 5000,
                                                   "skip": len(found)})
            page.raise_for_status()
            found.update((d["_id"], d) for d in page.json())
            if len(page.json()) < 5000:
                return found


async def test_sigkill_at_random_moments_loses_no_acknowledged_write(
    tmp_path: Path, storage: str
) -> None:
    ledger = Ledger()
    seed, served = await killed_and_restarted(
        tmp_path, storage, rounds=KILLS, clients=CLIENTS, seconds=LOAD_SECONDS,
        client_of=_client, drive=lambda client, rng, stop: _drive(ledger, client, rng, stop))
    try:
        stored = await _stored(served)
    finally:
        served.stop()
    print(f"\n{KILLS} kills: {ledger.writes} writes acknowledged and verified, "
          f"{ledger.lost_answers} cut off unanswered, {len(stored)} documents stored "
          f"(seed {seed})")
    assert ledger.check(stored) == [], f"seed {seed}"
    assert ledger.writes > 10 * KILLS, "too few writes to mean anything"
    assert ledger.lost_answers > 0, "the kills cut off no write in flight"
