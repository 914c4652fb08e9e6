"""``async with db.batch():`` on the remote client against the embedded block.

Each scenario runs once on an embedded database and once through the client on
another served database of the same engine, set up alike: the values the block's calls
returned (read after the block), the exception it raised and the documents stored
afterwards must be the same, ids and timestamps aside. The client queues the block's
calls and sends them as one ``POST /batch`` (docbase/client/batch.py).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import docbase
from docbase.client import RemoteDatabase
from docbase.client.pending import Reference
from docbase.core.database import Database
from docbase.core.errors import InvalidQuery, NotFound, TransactionsUnsupported
from docbase.core.schema import parse_schema
from tests.backends import BACKENDS, sql_backend, sql_url
from tests.remote_backends import served

Scenario = Callable[[Any], Awaitable[Any]]
COLLECTIONS = ("orders", "lines", "stock")
ENGINES = ["sqlite-file", "memory", pytest.param("postgresql", marks=pytest.mark.postgres)]
_ID = re.compile(r"[0-9a-f]{24}")


def normalized(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with each id named by its first appearance, and no timestamps."""
    if isinstance(value, dict):
        return {k: normalized(v, ids) for k, v in value.items()
                if k not in {"_created", "_changed"}}
    if isinstance(value, list | tuple):
        return [normalized(v, ids) for v in value]
    if isinstance(value, str) and _ID.fullmatch(value):
        return ids.setdefault(value, f"id{len(ids)}")
    if isinstance(value, Exception):
        return type(value).__name__
    return value


async def set_up(db: Database) -> None:
    await db.schemas.put(parse_schema("stock", {"fields": [
        {"name": "sku", "type": "text", "unique": True},
        {"name": "left", "type": "number", "min": 0}]}))
    await db.collection("stock").insert({"sku": "tea", "left": 9})


async def outcome(db: Any, stored: Database, scenario: Scenario) -> Any:
    """What ``scenario`` returned or raised on ``db``, and what ``stored`` holds after."""
    try:
        result: Any = ("answer", await scenario(db))
    except Exception as exc:  # the exception is what is compared
        result = ("raises", type(exc).__name__)
    state = {c: await stored.collection(c).find() for c in COLLECTIONS}
    return normalized([result, state], {})


async def tea(db: Any) -> dict[str, Any]:
    found: list[dict[str, Any]] = await db.collection("stock").find({"sku": "tea"})
    return found[0]


async def order_with_lines(db: Any) -> Any:
    orders, stock, before = db.collection("orders"), db.collection("stock"), await tea(db)
    async with db.batch():
        order = await orders.insert({"customer": "ann"})
        line = await orders.children(order["_id"], "lines").insert(
            {"sku": "tea", "order": order["_id"]})
        left = await stock.patch(before["_id"], {"left": 7}, expected_version=0)
        more = await orders.insert_many([{"customer": "bob"}, {"customer": "cy"}])
        gone = await orders.delete(more[1]["_id"])
        again = await orders.get(order["_id"])
        found = await stock.find({"sku": "tea"})
        each = await stock.insert_each([{"sku": "cake", "left": 1}, {"left": -1}],
                                       validate=False)
    return [order, line, left, more, gone, again, found, each]


async def stale_write_rolls_back(db: Any) -> Any:
    orders, stock, before = db.collection("orders"), db.collection("stock"), await tea(db)
    async with db.batch():
        order = await orders.insert({"customer": "ann"})
        await orders.children(order["_id"], "lines").insert({"order": order["_id"]})
        await stock.patch(before["_id"], {"left": 5}, expected_version=4)
        await orders.insert({"customer": "never"})


async def invalid_write_rolls_back(db: Any) -> Any:
    async with db.batch():
        await db.collection("orders").insert({"customer": "ann"})
        await db.collection("stock").insert({"sku": "cake", "left": 1})
        await db.collection("stock").insert({"sku": "pie", "left": -1})


async def taken_unique_value_rolls_back(db: Any) -> Any:
    async with db.batch():
        await db.collection("stock").insert({"sku": "cake", "left": 1})
        await db.collection("stock").insert({"sku": "tea", "left": 1})


async def not_atomic_keeps_what_ran(db: Any) -> Any:
    async with db.batch(atomic=False):
        made = await db.collection("orders").insert({"customer": "ann"})
        await db.collection("stock").patch("5f0000000000000000000000", {"left": 1})
    return made


async def a_raising_block_stores_nothing(db: Any) -> Any:
    async with db.batch():
        await db.collection("orders").insert({"customer": "ann"})
        raise LookupError


async def a_raising_block_not_atomic_keeps_its_writes(db: Any) -> Any:
    async with db.batch(atomic=False):
        await db.collection("orders").insert({"customer": "ann"})
        raise LookupError


async def an_inner_block_that_raises_is_dropped(db: Any) -> Any:
    orders = db.collection("orders")
    async with db.batch():
        first = await orders.insert({"customer": "ann"})
        with contextlib.suppress(LookupError):
            async with db.batch():
                await orders.insert({"customer": "bob"})
                raise LookupError
        last = await orders.patch(first["_id"], {"paid": True})
    return [first, last]


async def an_inner_block_not_atomic_keeps_its_writes(db: Any) -> Any:
    orders = db.collection("orders")
    async with db.batch():
        first = await orders.insert({"customer": "ann"})
        with contextlib.suppress(LookupError):
            async with db.batch(atomic=False):
                await orders.insert({"customer": "bob"})
                raise LookupError
    return first


SCENARIOS = [order_with_lines, stale_write_rolls_back, invalid_write_rolls_back,
             taken_unique_value_rolls_back, not_atomic_keeps_what_ran,
             a_raising_block_stores_nothing, a_raising_block_not_atomic_keeps_its_writes,
             an_inner_block_that_raises_is_dropped, an_inner_block_not_atomic_keeps_its_writes]


@contextlib.asynccontextmanager
async def embedded(request: pytest.FixtureRequest, engine: str,
                   directory: Path) -> AsyncIterator[Database]:
    """A fresh open database of ``engine`` in this process (storage of its own)."""
    async with contextlib.AsyncExitStack() as stack:
        if engine == "memory":
            stores = await stack.enter_async_context(BACKENDS["memory"](request))
        else:
            url = (f"sqlite:///{directory}/embedded.db" if engine == "sqlite-file" else
                   await stack.enter_async_context(sql_url(engine, directory)))
            stores = await stack.enter_async_context(sql_backend(url))
        async with Database(*stores, name="main") as database:
            yield database


@contextlib.asynccontextmanager
async def remote_pair(request: pytest.FixtureRequest, engine: str, directory: Path,
                      ) -> AsyncIterator[tuple[RemoteDatabase, Database]]:
    """The client on a fresh served database of ``engine``, and that database."""
    async with served(request, engine, directory) as (live, database):
        db = await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                                   verify=live.certfile)
        assert isinstance(db, RemoteDatabase)
        async with db:
            yield db, database


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("engine", ENGINES)
async def test_a_remote_block_answers_raises_and_stores_as_the_embedded_one(
        request: pytest.FixtureRequest, tmp_path: Path, engine: str,
        scenario: Scenario) -> None:
    async with (embedded(request, engine, tmp_path) as local_db,
                remote_pair(request, engine, tmp_path) as (remote, stored)):
        await set_up(local_db)
        await set_up(stored)
        local = await outcome(local_db, local_db, scenario)
        there = await outcome(remote, stored, scenario)
    assert there == local
    if scenario is order_with_lines:  # the scenarios do what their names say
        assert local[0][0] == "answer"
        assert local[0][1][1]["order"] == local[0][1][0]["_id"]
        assert len(local[1]["lines"]) == 1
    elif scenario is stale_write_rolls_back:
        assert local[0] == ["raises", "VersionMismatch"]
        assert local[1]["orders"] == local[1]["lines"] == []


async def test_before_the_block_ends_the_answers_are_references(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with remote_pair(request, "memory", tmp_path) as (db, stored):
        orders = db.collection("orders")
        async with db.batch() as batch:
            order = await orders.insert({"customer": "ann"})
            made = await orders.insert_many([{"n": 1}])
            assert isinstance(order["_id"], Reference)
            assert order["_id"].name == "0._id"
            assert str(made[0]["_id"]) == "{1.0._id}"
            await orders.children(made[0]["_id"], "lines").insert({"order": order["_id"]})
            assert batch.requests[2] == {"method": "POST",
                                         "path": "/rest/orders/{1.0._id}/lines",
                                         "body": {"order": {"$ref": "0._id"}}}
            with pytest.raises(InvalidQuery, match="count"):
                await orders.count()
            assert await stored.collection("orders").find() == []  # nothing sent yet
        assert order.sent
        assert [r["status"] for r in batch.responses] == [201, 201, 201]
        assert batch.batch_id is not None
        [line] = await stored.collection("lines").find()
    assert line["order"] == order["_id"]
    assert line["_parent_id"] == made[0]["_id"]


async def test_an_atomic_block_on_mongodb_raises_and_stores_nothing(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with remote_pair(request, "mongo", tmp_path) as (db, stored):
        with pytest.raises(TransactionsUnsupported):
            async with db.batch():
                await db.collection("orders").insert({"customer": "ann"})
        assert await stored.collection("orders").find() == []


async def test_a_reference_is_sent_only_in_its_own_batch(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Its ``N`` would name another request elsewhere: a value of a batch already sent,
    of a request an inner block dropped, or of a failed batch is refused."""
    async with remote_pair(request, "memory", tmp_path) as (db, stored):
        orders = db.collection("orders")
        async with db.batch():
            early = (await orders.insert({"n": 1}))["_id"]
            with contextlib.suppress(LookupError):
                async with db.batch():
                    dropped = (await orders.insert({"n": 2}))["_id"]
                    raise LookupError
            with pytest.raises(InvalidQuery, match="already sent"):
                await orders.insert({"parent": dropped})
            await orders.insert({"n": 3})
            with pytest.raises(InvalidQuery, match="If-Match"):
                await orders.patch(early, {"n": 5}, expected_version=0)
        with pytest.raises(InvalidQuery):
            async with db.batch():
                await orders.get(early)
        with pytest.raises(NotFound):
            async with db.batch():
                failed = await orders.patch("5f0000000000000000000000", {"n": 4})
        with pytest.raises(KeyError):
            failed["_id"]  # an empty answer, no longer a reference
        assert sorted(d["n"] for d in await stored.collection("orders").find()) == [1, 3]


async def one_batch_inside_another(one: Any, two: Any) -> list[int]:
    """A block of database ``two`` inside one of ``one``: how many answers each got."""
    async with one.batch() as first:
        made = await one.collection("orders").insert({"n": 1})
        async with two.batch() as second:
            await two.collection("orders").insert({"n": 2})
            await one.collection("orders").insert({"n": 4})  # queued in one's batch
            with pytest.raises(InvalidQuery, match="another batch"):
                await two.collection("orders").insert({"of": made["_id"]})
        assert len(second.responses) == 1  # sent at the end of its own block
        await one.collection("orders").insert({"n": 3})
    return [len(first.responses), len(second.responses)]


async def test_the_batches_of_two_databases_queue_their_own_calls(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with (served(request, "memory", tmp_path) as (live, stored),
                await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                                      verify=live.certfile) as one,
                await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                                      verify=live.certfile) as two):
        assert await one_batch_inside_another(one, two) == [3, 1]
        assert sorted(d["n"] for d in await stored.collection("orders").find()) == [1, 2, 3, 4]
