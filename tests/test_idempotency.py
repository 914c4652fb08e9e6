"""``Idempotency-Key`` on single writes, over real HTTPS on every backend.

A retry with the same key and body answers the stored answer and applies nothing; the
key with another body is 422; a key belongs to the credential that used it; two
requests with one key at once apply once (``docs/batch.md``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from docbase import Database, Limits
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.idempotency import IDEMPOTENCY_COLLECTION, StoredAnswer, claim
from docbase.core.idempotency.records import record_id
from docbase.core.query import Query
from docbase.http.testing import live_docbase


async def _count(live: Any, collection: str) -> int:
    answer = await live.client.get(f"/rest/{collection}", headers=live.auth())
    assert answer.status_code == 200
    return len(answer.json())


async def test_a_retried_create_answers_the_first_answer_and_creates_once(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "order-1"}
    first = await live.client.post("/rest/orders", json={"total": 5}, headers=headers)
    again = await live.client.post("/rest/orders", json={"total": 5}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await _count(live, "orders") == 1


async def test_the_same_key_with_another_body_is_422_and_changes_nothing(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "k"}
    assert (await live.client.post("/rest/orders", json={"total": 5},
                                   headers=headers)).status_code == 201
    other = await live.client.post("/rest/orders", json={"total": 6}, headers=headers)
    assert other.status_code == 422
    assert other.json()["name"] == "IdempotencyKeyReused"
    assert other.json()["status"] == 422
    elsewhere = await live.client.post("/rest/invoices", json={"total": 5}, headers=headers)
    assert elsewhere.status_code == 422
    assert await _count(live, "orders") == 1
    assert await _count(live, "invoices") == 0


async def test_updates_and_deletes_apply_once(live: Any) -> None:
    created = (await live.client.post("/rest/stock", json={"n": 1},
                                      headers=live.auth())).json()
    path = f"/rest/stock/{created['_id']}"
    put = {**live.auth(), "Idempotency-Key": "inc-1"}
    answers = [await live.client.put(path, json={"$inc": {"n": 1}}, headers=put)
               for _ in range(3)]
    assert {a.json()["n"] for a in answers} == {2}
    assert (await live.client.get(path, headers=live.auth())).json()["n"] == 2
    gone = {**live.auth(), "Idempotency-Key": "del-1"}
    deleted = [await live.client.delete(path, headers=gone) for _ in range(2)]
    assert [d.status_code for d in deleted] == [200, 200]
    assert deleted[1].json() == {"result": [created["_id"]]}


async def test_a_key_belongs_to_its_credential(live: Any) -> None:
    other = await live.key(paths=["/rest/orders/**", "/rest/orders"])
    mine = {**live.auth(), "Idempotency-Key": "shared"}
    theirs = {"x-apikey": other, "Idempotency-Key": "shared"}
    first = await live.client.post("/rest/orders", json={"total": 1}, headers=mine)
    second = await live.client.post("/rest/orders", json={"total": 1}, headers=theirs)
    assert first.status_code == second.status_code == 201
    assert second.json()["_id"] != first.json()["_id"]
    assert "idempotent-replayed" not in second.headers
    assert await _count(live, "orders") == 2


async def test_a_refused_write_is_answered_again_and_a_server_error_is_not_kept(
        live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "missing"}
    path = "/rest/stock/5f0000000000000000000000"
    answers = [await live.client.patch(path, json={"n": 1}, headers=headers)
               for _ in range(2)]
    assert [a.status_code for a in answers] == [404, 404]
    assert answers[1].headers["idempotent-replayed"] == "true"


async def test_concurrent_requests_with_one_key_create_once(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "race"}
    answers = await asyncio.gather(*(
        live.client.post("/rest/orders", json={"total": 9}, headers=headers)
        for _ in range(8)))
    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) <= {201, 409}
    assert statuses.count(201) >= 1
    if "Mongo" not in type(live.db.store).__name__:  # claim and write commit together:
        assert statuses == [201] * 8  # the others waited for the commit and replayed
    created = {a.json()["_id"] for a in answers if a.status_code == 201}
    assert len(created) == 1
    assert await _count(live, "orders") == 1


async def test_keys_are_kept_in_the_system_collection(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "stored"}
    await live.client.post("/rest/orders", json={"total": 1}, headers=headers)
    records = await live.db.store.find(IDEMPOTENCY_COLLECTION, Query(limit=None))
    assert len(records) == 1
    assert records[0]["answer"]["status"] == 201
    assert records[0]["exp"] > 0


async def test_a_large_answer_is_replayed_byte_for_byte(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "many"}
    batch = [{"n": n, "name": f"Zoë \"{n}\"", "tags": ["a", "b"]} for n in range(1000)]
    first = await live.client.post("/rest/orders", json=batch, headers=headers)
    again = await live.client.post("/rest/orders", json=batch, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["content-type"] == first.headers["content-type"]
    assert again.headers["idempotent-replayed"] == "true"
    assert await _count(live, "orders") == 1000


async def test_an_answer_stored_before_answers_were_packed_is_replayed(live: Any) -> None:
    ident = record_id("apikey:k1", "old")  # a record as the previous release wrote it
    answer = {"status": 201, "body": '{"_id":"x","n":1}', "headers": [["etag", '"1"']]}
    await live.db.store.insert(IDEMPOTENCY_COLLECTION, [{
        "_id": ident, "fingerprint": "f", "exp": time.time() + 60, "answer": answer}])
    claimed = await claim(live.db, "apikey:k1", "old", "f")
    assert claimed.answer == StoredAnswer(201, b'{"_id":"x","n":1}', (("etag", '"1"'),))


async def test_a_bad_key_is_400(live: Any) -> None:
    headers = {**live.auth(), "Idempotency-Key": "x" * 300}
    answer = await live.client.post("/rest/orders", json={}, headers=headers)
    assert answer.status_code == 400
    assert await _count(live, "orders") == 0


async def test_a_keyed_body_over_the_limit_is_413_and_keeps_nothing(tmp_path: Path) -> None:
    db = Database(MemoryDocumentStore(), MemoryBlobStore(), name="main",
                  limits=Limits(max_body_bytes=100))
    async with db, live_docbase({"main": db}, tmp_path) as live:
        headers = {**live.auth(), "Idempotency-Key": "big"}
        answer = await live.client.post("/rest/orders", json={"x": "y" * 200},
                                        headers=headers)
        assert answer.status_code == 413
        assert answer.json()["name"] == "PayloadTooLarge"
        assert await db.store.find(IDEMPOTENCY_COLLECTION, Query(limit=None)) == []
        assert await _count(live, "orders") == 0
