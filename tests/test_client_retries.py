"""The client's write retries against answers lost after the server committed.

Between the client and a docbase served over HTTPS on every backend stands a real
proxy (tests/answer_cutting_proxy.py) that forwards each request and then loses the
answers it is told to: the server applied the write, the client sees its connection
closed. With the default retries the client sends the write again with the same
``Idempotency-Key``, gets the first answer, and the write is applied once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import pytest

import docbase
from docbase.client import RemoteDatabase, Retries
from docbase.core.errors import BackendError, NotFound
from docbase.core.idempotency import IDEMPOTENCY_COLLECTION
from docbase.core.query import Query
from docbase.http.testing import LiveDocbase
from tests.answer_cutting_proxy import AnswerCuttingProxy


def odd(answer: int) -> bool:
    """Lose the first answer to each write, relay its retry's."""
    return answer % 2 == 1


@contextlib.asynccontextmanager
async def proxied(live: LiveDocbase, cut: Callable[[int], bool], **options: Any,
                  ) -> AsyncIterator[tuple[RemoteDatabase, AnswerCuttingProxy]]:
    """The client on ``live`` through a proxy losing the answers ``cut`` picks."""
    port = int(live.base_url.rsplit(":", 1)[1])
    proxy = AnswerCuttingProxy(port, live.certfile, live.certfile.parent / "key.pem", cut)
    async with proxy.running() as url:
        db = await docbase.connect(url, apikey=live.admin_keys["main"],
                                   verify=live.certfile, **options)
        assert isinstance(db, RemoteDatabase)
        async with db:
            yield db, proxy


async def test_writes_whose_answers_were_lost_are_applied_once(live: LiveDocbase) -> None:
    stored = live.db.collection("notes")
    async with proxied(live, odd) as (db, proxy):
        notes = db.collection("notes")
        made = [await notes.insert({"seq": seq}) for seq in range(3)]
        many = await notes.insert_many([{"seq": 3}, {"seq": 4}])
        counted = await notes.update(made[0]["_id"], {"$inc": {"seq": 10}})
        patched = await notes.patch(made[1]["_id"], {"tag": "b"})
        deleted = await notes.delete(made[2]["_id"])
    assert proxy.cut_paths[:3] == ["POST /rest/notes"] * 3
    assert len(proxy.cut_paths) == 7
    assert proxy.answers == 14  # each write sent twice, its first answer lost
    assert counted["seq"] == 10
    assert patched["tag"] == "b"
    assert deleted == [made[2]["_id"]]  # the retry replays, rather than 404
    documents = {d["_id"]: d for d in await stored.find()}
    assert sorted(d["seq"] for d in documents.values()) == [1, 3, 4, 10]
    assert documents[made[0]["_id"]]["_version"] == 1  # $inc applied once
    assert {d["_id"] for d in many} <= documents.keys()


async def test_without_write_retries_a_lost_answer_raises_though_the_write_was_applied(
        live: LiveDocbase) -> None:
    """The proxy cuts after the commit: the control case of the test above."""
    async with proxied(live, odd, retries=Retries(retry_writes=False)) as (db, proxy):
        with pytest.raises(BackendError):
            await db.collection("notes").insert({"seq": 1})
    assert proxy.answers == 1
    assert [d["seq"] for d in await live.db.collection("notes").find()] == [1]


async def test_an_error_answer_is_not_sent_again(live: LiveDocbase) -> None:
    async with proxied(live, lambda _: False) as (db, proxy):
        with pytest.raises(NotFound):
            await db.collection("notes").patch("5f0000000000000000000000", {"n": 1})
    assert proxy.answers == 1


async def test_a_key_whose_first_request_is_unanswered_is_sent_again_until_it_answers(
        live: LiveDocbase) -> None:
    """``409 IdempotencyKeyInUse`` (the first request still running) is retried.

    A first request with the key runs; its record is then made unanswered, as while
    the first request runs; the client's request with the key is answered 409 until the
    answer is back, and then replays it.
    """
    body = msgspec.json.encode({"total": 5})
    headers = {**live.auth(), "idempotency-key": "slow-1",
               "content-type": "application/json"}
    first = await live.client.post("/rest/orders", content=body, headers=headers)
    assert first.status_code == 201
    [record] = await live.db.store.find(IDEMPOTENCY_COLLECTION, Query(limit=None))
    running = {k: v for k, v in record.items() if k != "answer"}
    await live.db.store.delete(IDEMPOTENCY_COLLECTION, [record["_id"]])
    await live.db.store.insert(IDEMPOTENCY_COLLECTION, [running])
    async with proxied(live, lambda _: False,
                       retries=Retries(attempts=8, backoff=0.1)) as (db, proxy):

        async def answer_when_refused() -> None:
            await proxy.answered.wait()  # the first 409
            await live.db.store.delete(IDEMPOTENCY_COLLECTION, [record["_id"]])
            await live.db.store.insert(IDEMPOTENCY_COLLECTION, [record])

        answering = asyncio.ensure_future(answer_when_refused())
        again = await db.transport.request("POST", "/rest/orders", content=body,
                                           headers={"idempotency-key": "slow-1",
                                                    "content-type": "application/json"},
                                           keyed=True)
        await answering
    assert proxy.answers >= 2  # a 409, then the replay
    assert again == first.json()
    assert len(await live.db.collection("orders").find()) == 1


@pytest.mark.transactions
async def test_a_batch_whose_answer_was_lost_is_applied_once(live: LiveDocbase) -> None:
    async with proxied(live, odd) as (db, proxy):
        orders = db.collection("orders")
        async with db.batch() as batch:
            order = await orders.insert({"customer": "ann"})
            line = await orders.children(order["_id"], "lines").insert(
                {"sku": "tea", "order": order["_id"]})
    assert proxy.cut_paths == ["POST /batch"]
    assert batch.batch_id is not None
    assert line["order"] == order["_id"] == line["_parent_id"]
    assert [o["_id"] for o in await live.db.collection("orders").find()] == [order["_id"]]
    assert len(await live.db.collection("lines").find()) == 1
