"""Webhooks: deliveries over real HTTP to a receiver on loopback, signed, retried,
disabled after repeated failures, once across processes, never to private addresses
unless the operator allows them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.database import Database
from docbase.core.errors import InvalidQuery
from docbase.core.settings import Limits
from docbase.core.webhooks import WEBHOOKS_COLLECTION, verify_signature
from docbase.core.webhooks.dispatcher import WebhookDispatcher
from docbase.core.webhooks.targets import is_public
from tests.backends import sql_backend
from tests.webhook_receiver import Receiver, webhook_receiver

LOOPBACK_ALLOWED = Limits(webhook_private_targets=True, webhook_retry_delay=0.2,
                          webhook_max_failures=3, change_poll_interval=0.05)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as running:
        yield running


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    async with Database(MemoryDocumentStore(), MemoryBlobStore(),
                        limits=LOOPBACK_ALLOWED) as database:
        yield database


def dispatching(db: Database) -> WebhookDispatcher:
    return WebhookDispatcher(db)


async def settled(db: Database, webhook_id: str, **expected: Any) -> dict[str, Any]:
    """The stored webhook once its fields hold ``expected`` (within generous seconds)."""
    async with asyncio.timeout(20):
        while True:
            stored = await db.store.get(WEBHOOKS_COLLECTION, webhook_id)
            if all(stored.get(k) == v for k, v in expected.items()):
                return stored
            await asyncio.sleep(0.05)


async def test_a_write_is_posted_in_the_original_shape_with_a_valid_signature(
    db: Database, receiver: Receiver,
) -> None:
    webhook = await db.webhooks.add(receiver.url, collections=["people"])
    async with dispatching(db):
        ann = await db.collection("people").insert({"name": "Ann"})
        await db.collection("orders").insert({"n": 1})  # not a collection of the webhook
        await db.collection("people").delete(ann["_id"])
        posted, deleted = await receiver.wait_for(2)
        await settled(db, webhook.id, cursor=3)
    assert posted.path == "/hook"
    assert json.loads(posted.body) == {"0": ann, "event": {
        "db": "docbase", "collection": "people", "method": "POST", "payload": [ann["_id"]]}}
    assert json.loads(deleted.body) == {"0": ann["_id"], "event": {
        "db": "docbase", "collection": "people", "method": "DELETE",
        "payload": [ann["_id"]]}}
    for request in (posted, deleted):
        headers = request.headers
        assert headers["content-type"] == "application/json"
        assert verify_signature(webhook.secret, headers["x-docbase-timestamp"], request.body,
                                headers["x-docbase-signature"])
        assert not verify_signature("another secret!!", headers["x-docbase-timestamp"],
                                    request.body, headers["x-docbase-signature"])
    assert [r.headers["x-docbase-delivery"] for r in (posted, deleted)] == ["1", "3"]
    state = await db.webhooks.get(webhook.id)
    assert (state.cursor, state.failures, state.last_status) == (3, 0, 200)


async def test_a_failed_delivery_is_retried_and_later_ones_wait_their_turn(
    db: Database, receiver: Receiver,
) -> None:
    receiver.answers = [500]
    webhook = await db.webhooks.add(receiver.url)
    async with dispatching(db):
        await db.collection("people").insert({"n": 1})
        await db.collection("people").insert({"n": 2})
        received = await receiver.wait_for(3)
        stored = await settled(db, webhook.id, cursor=2)
    assert [json.loads(r.body)["0"]["n"] for r in received] == [1, 1, 2]
    assert [r.headers["x-docbase-delivery"] for r in received] == ["1", "1", "2"]
    assert (stored["failures"], stored["enabled"], stored["last_status"]) == (0, True, 200)
    assert stored["last_error"] is None


async def test_a_webhook_failing_repeatedly_is_disabled_and_can_be_enabled_again(
    db: Database, receiver: Receiver,
) -> None:
    receiver.always = 503
    webhook = await db.webhooks.add(receiver.url)
    async with dispatching(db):
        await db.collection("people").insert({"n": 1})
        await receiver.wait_for(3)
        stored = await settled(db, webhook.id, enabled=False)
        await asyncio.sleep(1.5)  # after the third failure nothing is tried any more
        assert len(receiver.received) == 3
        assert (stored["failures"], stored["last_status"]) == (3, 503)
        assert "answered 503" in stored["last_error"]
        assert stored["disabled"]
        receiver.always = 200
        await db.webhooks.enable(webhook.id)
        received = await receiver.wait_for(4)
        await settled(db, webhook.id, cursor=1, failures=0)
    assert json.loads(received[3].body)["0"]["n"] == 1


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/",
    "http://192.168.0.10/", "http://172.16.5.4/", "http://169.254.169.254/latest/meta-data",
    "http://100.64.0.1/", "http://0.0.0.0/", "http://[::1]/", "http://[fd00::1]/",
    "http://[::ffff:127.0.0.1]/", "http://[fe80::1]/", "http://224.0.0.1/",
    "http://[64:ff9b::a9fe:a9fe]/latest/meta-data", "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::10.0.0.1]/", "http://[64:ff9b:1::808:808]/",
    "http://[2002:a9fe:a9fe::1]/", "http://[2002:7f00:1::]/", "http://[::a9fe:a9fe]/",
    "http://[::10.1.2.3]/",
])
async def test_private_addresses_are_refused_by_default(url: str) -> None:
    db = Database(MemoryDocumentStore())
    with pytest.raises(InvalidQuery, match="webhook_private_targets"):
        await db.webhooks.add(url)
    assert await db.webhooks.find() == []


@pytest.mark.parametrize("address", [
    "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "8.8.8.8", "2606:4700::1111",
])
def test_public_addresses_inside_ipv6_stay_public(address: str) -> None:
    assert is_public(address)


@pytest.mark.parametrize("url", [
    "ftp://example.com/", "example.com/hook", "http:///nohost", "https://user:pw@example.com/",
    "http://example.com:99999/", 17,
])
async def test_malformed_urls_are_refused(url: Any) -> None:
    db = Database(MemoryDocumentStore(), limits=LOOPBACK_ALLOWED)
    with pytest.raises(InvalidQuery):
        await db.webhooks.add(url)
    assert await db.webhooks.find() == []


async def test_a_stored_private_target_is_refused_again_at_delivery(
    receiver: Receiver,
) -> None:
    store = MemoryDocumentStore()
    allowed = Database(store, limits=LOOPBACK_ALLOWED)
    webhook = await allowed.webhooks.add(receiver.url)
    # the same storage served with the default limits: the address is checked again
    db = Database(store, limits=Limits(webhook_retry_delay=0.2, change_poll_interval=0.05))
    async with dispatching(db):
        await db.collection("people").insert({"n": 1})
        stored = await settled(db, webhook.id, failures=1)
    assert "non-public address 127.0.0.1" in stored["last_error"]
    assert receiver.received == []


async def test_two_processes_deliver_each_change_once_and_in_order(
    tmp_path: Path, receiver: Receiver,
) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    async with sql_backend(url) as first_stores, sql_backend(url) as second_stores:
        first = Database(*first_stores, limits=LOOPBACK_ALLOWED)
        second = Database(*second_stores, limits=LOOPBACK_ALLOWED)
        await first.webhooks.add(receiver.url)
        async with dispatching(first), dispatching(second):
            for n in range(6):
                await (first if n % 2 else second).collection("notes").insert({"n": n})
            await receiver.wait_for(6)
            await asyncio.sleep(0.5)  # a duplicate would arrive meanwhile
    assert [json.loads(r.body)["0"]["n"] for r in receiver.received] == list(range(6))
