"""The Mongo adapter's stored keys: never a leading ``$``, exact, in order, legacy-safe."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bson import ObjectId
from hypothesis import given, settings
from hypothesis import strategies as st

from docbase.adapters.mongo import MongoDocumentStore
from docbase.adapters.mongo.keys import SHIFT, decode_mongo_key, encode_mongo_key
from docbase.adapters.mongo.updates import compile_update
from docbase.core.documents import new_document
from docbase.core.errors import InvalidQuery
from docbase.core.query import Eq, Query
from docbase.core.update import IncOp, SetOp, Update
from tests.backends import IN_CI, mongo_backend

pytestmark = pytest.mark.mongo

C = "keys"
PROPERTY = settings(max_examples=2000 if IN_CI else 300, deadline=None)
# the characters the schemes turn on, their neighbours, and the extremes
KEYS = st.text("$#%.\x00\x01\x02a\uffff\U0010ffff", max_size=5)


@PROPERTY
@given(KEYS, KEYS)
def test_stored_keys_decode_exactly_keep_order_and_never_start_with_dollar(
    first: str, second: str
) -> None:
    a, b = encode_mongo_key(first), encode_mongo_key(second)
    assert (decode_mongo_key(a), decode_mongo_key(b)) == (first, second)
    assert (a < b, a == b) == (first < second, first == second)
    assert not a.startswith("$")
    assert "\x00" not in a


def test_stored_forms() -> None:
    assert encode_mongo_key("$where") == SHIFT + "$where"
    assert encode_mongo_key(SHIFT + "x") == SHIFT + "#x"
    assert encode_mongo_key("#" + "\U0010ffff") == SHIFT + "#"
    assert encode_mongo_key("a$b.c") == "a$b.c"
    assert encode_mongo_key("$\x00") == SHIFT + "$\x01\x01"


def test_keys_stored_raw_by_earlier_versions_decode_unchanged() -> None:
    for raw in ("$where", "a.b", SHIFT, SHIFT + "x", "#"):
        assert decode_mongo_key(raw) == raw


def test_updates_naming_dotted_keys_take_the_replace_path() -> None:
    assert compile_update(Update((SetOp(("a", "b.c"), 1),)), {}) is None
    assert compile_update(Update((IncOp(("a", "b"), 1),)), {}) is not None


# ------------------------------------------------------------------ on the server


@pytest.fixture
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[MongoDocumentStore]:
    async with mongo_backend(request) as (store, _):
        yield store


async def test_stored_documents_hold_no_dollar_key(mongo: MongoDocumentStore) -> None:
    document = new_document({"$where": "s", "in": [{"$set": {"$inc": 1}}]}, "api")
    await mongo.insert(C, [document])
    raw = await mongo.database[C].find_one({"_id": ObjectId(document["_id"])})
    assert raw is not None
    assert raw[SHIFT + "$where"] == "s"
    assert raw["in"] == [{SHIFT + "$set": {SHIFT + "$inc": 1}}]


async def test_raw_dollar_keys_of_earlier_versions_read_back_and_update(
    mongo: MongoDocumentStore,
) -> None:
    document = new_document({"s": ["text"], "n": 0}, "api")
    await mongo.insert(C, [document])
    oid = ObjectId(document["_id"])
    # what an earlier version stored: "$" keys as given, here nested
    await mongo.database[C].update_one({"_id": oid}, {"$set": {"nested": {"$old": 1}}})
    assert (await mongo.get(C, document["_id"]))["nested"] == {"$old": 1}
    native = Update((IncOp(("n",), 1),))
    replaced = Update((SetOp(("s", "0"), "new"),))  # over a string: read-apply-replace
    for update in (native, replaced):
        updated = await mongo.update(C, document["_id"], update, stamp={})
        assert updated["nested"] == {"$old": 1}
    assert {k: v for k, v in updated.items() if not k.startswith("_")} == {
        "s": ["new"], "n": 1, "nested": {"$old": 1}}
    raw = await mongo.database[C].find_one({"_id": oid})
    assert raw is not None
    assert raw["nested"] == {SHIFT + "$old": 1}  # the replace stored it shifted
    assert await mongo.count(C, Eq(("nested", "$old"), 1)) == 1


async def test_replace_path_with_dollar_keys_loses_no_concurrent_update(
    mongo: MongoDocumentStore,
) -> None:
    document = new_document({"$where": 0, "n": 0, "s": ["a"]}, "api")
    await mongo.insert(C, [document])
    native = Update((IncOp(("n",), 1),))
    replaced = Update((IncOp(("$where",), 1), SetOp(("s", "0"), "b")))  # over a string
    assert compile_update(native, {}) is not None
    updates = [native, replaced] * 15
    await asyncio.gather(*(mongo.update(C, document["_id"], u, stamp={}) for u in updates))
    final = await mongo.get(C, document["_id"])
    assert (final["$where"], final["n"], final["s"], final["_version"]) == (15, 15, ["b"], 30)
    assert await mongo.count(C, Eq(("$where",), 15)) == 1


async def test_dollar_keys_are_indexed_under_their_stored_name(
    mongo: MongoDocumentStore,
) -> None:
    await mongo.ensure_index(C, ("$where",))
    keys: list[Any] = [info["key"] for info in
                       (await mongo.database[C].index_information()).values()]
    assert [(SHIFT + "$where", 1)] in keys


async def test_dotted_keys_cannot_be_indexed(mongo: MongoDocumentStore) -> None:
    await mongo.insert(C, [new_document({"a.b": 1, "a": {"b": 1}}, "api")])
    await mongo.ensure_index(C, ("a.b",))  # no query could use it: nothing to do
    assert len(await mongo.database[C].index_information()) == 1  # _id only
    with pytest.raises(InvalidQuery):  # it would constrain a.b, the path, instead
        await mongo.ensure_index(C, ("a.b",), unique=True)
    assert [d["a.b"] for d in await mongo.find(C, Query())] == [1]
