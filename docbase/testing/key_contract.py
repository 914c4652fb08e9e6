"""The part of the store contract about odd document keys: stored and named exactly.

A key may hold NUL (U+0000), the escape character of stored keys (U+0001, see
:mod:`docbase.core.field_name_encoding`) or its code words, ``$`` (and the prefix the Mongo
adapter stores ``$`` keys behind, :mod:`docbase.adapters.mongo.keys`) or ``.``; a store
keeps it exactly, finds it by any condition, sorts, groups, indexes, projects and
updates it by every update shape, at the top level and nested.
:class:`DocumentKeysContract` is a base of
:class:`~docbase.testing.contract.DocumentStoreContract`, so every adapter keeps it.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from docbase.core.documents import Document, new_document
from docbase.core.errors import VersionMismatch
from docbase.core.ports import DocumentStore
from docbase.core.query import (
    Aggregate,
    Eq,
    Exists,
    Gt,
    In,
    Projection,
    Query,
    SortKey,
)
from docbase.core.update import IncOp, PullOp, PushOp, SetOp, UnsetOp, Update

C = "oddkeys"
NUL = "a\x00b"
ESCAPE = "\x01"
CODE_WORDS = "x\x01\x01\x01\x02y"  # what NUL and U+0001 are stored as, given as a key
SHIFTED = "#\U0010ffff$where"  # what the Mongo adapter stores "$where" as, given as a key
GONE = object()
ODD_KEYS = (NUL, ESCAPE, CODE_WORDS, "\x00", "$where", "a.b", "%00", SHIFTED)


def odd(**fields: Any) -> dict[str, Any]:
    """A body holding every odd key at the top level and nested under ``inner``."""
    body: dict[str, Any] = {key: i for i, key in enumerate(ODD_KEYS)}
    body["inner"] = {key: [f"{i}\x01", {key: i}] for i, key in enumerate(ODD_KEYS)}
    body.update(fields)
    return body


async def _seed(store: DocumentStore, *bodies: dict[str, Any]) -> list[Document]:
    documents = [new_document(body, "api") for body in bodies]
    await store.insert(C, documents)
    return documents


class DocumentKeysContract:
    """Keys with NUL, the stored-key escape, ``$`` and ``.`` on every store."""

    async def test_odd_keys_are_stored_and_read_back_exactly(
        self, store: DocumentStore
    ) -> None:
        (original,) = await _seed(store, odd(n=1))
        assert await store.get(C, original["_id"]) == original
        assert await store.find(C, Query()) == [original]
        raw = await store.find_encoded(C, Query(), hide=())
        assert msgspec.json.decode(raw[0]) == original

    async def test_odd_keys_are_found_by_every_condition(self, store: DocumentStore) -> None:
        first, second = await _seed(store, odd(), {NUL: "other", "inner": {ESCAPE + "z": 9}})
        for i, key in enumerate(ODD_KEYS):
            for condition in (Eq((key,), i), Gt((key,), i - 1), In((key,), (i, 100)),
                              Eq(("inner", key, key), i), Exists(("inner", key, key), True)):
                found = await store.find(C, Query(filter=condition))
                assert [d["_id"] for d in found] == [first["_id"]], (key, condition)
            assert await store.count(C, Exists(("inner", key), False)) == 1
        object_value = {key: [f"{i}\x01", {key: i}] for i, key in enumerate(ODD_KEYS)}
        assert await store.count(C, Eq(("inner",), object_value)) == 1
        assert await store.count(C, Eq(("inner", ESCAPE + "z"), 9)) == 1
        assert [d["_id"] for d in await store.find(C, Query(filter=Eq((NUL,), "other")))] == [
            second["_id"]]

    async def test_odd_keys_sort_group_and_project(self, store: DocumentStore) -> None:
        documents = await _seed(store, *({NUL: 3 - i, ESCAPE: {"\x00": i % 2},
                                          "plain": {"\x00": 1, "\x01": i},
                                          "keyed": {("0", "\x01", "\x00")[i]: 1}}
                                         for i in range(3)))
        ascending = await store.find(C, Query(sort=(SortKey((NUL,)),)))
        assert [d[NUL] for d in ascending] == [1, 2, 3]
        by_object = await store.find(C, Query(sort=(SortKey(("plain",), -1),)))
        assert [d["plain"]["\x01"] for d in by_object] == [2, 1, 0]
        # objects sort by their keys first: U+0000 < U+0001 < "0", stored keys alike
        by_keys = await store.find(C, Query(sort=(SortKey(("keyed",)),)))
        assert [d["_id"] for d in by_keys] == [d["_id"] for d in reversed(documents)]
        rows = await store.aggregate(C, Eq(("plain", "\x00"), 1), [(ESCAPE, "\x00")],
                                     [Aggregate("SUM", NUL), Aggregate("MAX", "plain")])
        assert [(row.key, row.values) for row in rows] == [
            ((0,), {f"SUM {NUL}": 4, "MAX plain": {"\x00": 1, "\x01": 2}}),
            ((1,), {f"SUM {NUL}": 2, "MAX plain": {"\x00": 1, "\x01": 1}}),
        ]
        kept = await store.find(C, Query(projection=Projection(((NUL,), ("plain", "\x01")),
                                                                True), limit=1))
        assert kept == [{"_id": documents[0]["_id"], NUL: 3, "plain": {"\x01": 0}}]

    async def test_odd_keys_are_updated_and_unset(self, store: DocumentStore) -> None:
        (original,) = await _seed(store, odd())
        update = Update((IncOp((NUL,), 10), SetOp(("inner", "new\x00", "x\x01"), {"\x00": 1}),
                         UnsetOp((CODE_WORDS,)), PushOp(("inner", ESCAPE), {ESCAPE: 2}),
                         SetOp(("fresh\x00",), {"k\x01": [1]})))
        changed = await store.update(C, original["_id"], update, stamp={})
        expected = odd()
        expected[NUL] += 10
        del expected[CODE_WORDS]
        expected["inner"]["new\x00"] = {"x\x01": {"\x00": 1}}
        expected["inner"][ESCAPE].append({ESCAPE: 2})
        expected["fresh\x00"] = {"k\x01": [1]}
        stored = await store.get(C, original["_id"])
        for result in (changed, stored):
            assert {k: v for k, v in result.items() if not k.startswith("_")} == expected
        assert await store.count(C, Eq(("fresh\x00", "k\x01"), 1)) == 1
        assert await store.count(C, Exists((CODE_WORDS,), True)) == 0

    async def test_odd_keys_can_be_indexed(self, store: DocumentStore) -> None:
        await _seed(store, odd(), {NUL: 100})
        await store.ensure_index(C, (NUL,))
        await store.ensure_index(C, ("inner", ESCAPE))
        assert await store.count(C, Eq((NUL,), 100)) == 1
        assert await store.count(C, Eq(("inner", ESCAPE), "1\x01")) == 1

    async def test_odd_keys_survive_every_update_shape(self, store: DocumentStore) -> None:
        # each shape once on a fresh document holding "$" keys at the top level and
        # nested, with the top-level fields it changes (GONE: removed); the comment says
        # which way the Mongo adapter takes (native operators, or read-apply-replace)
        inner = odd()["inner"]
        shapes: list[tuple[Update, dict[str, Any]]] = [
            (Update((SetOp(("inner", "$where"), "new"),)),  # over strings: replace
             {"inner": {**inner, "$where": "new"}}),
            (Update((IncOp(("$where",), 5), IncOp(("$set", "$inc"), 1))),  # native
             {"$where": 9, "$set": {"$inc": 2}}),
            (Update((PushOp(("list",), {"$x": 1}), UnsetOp(("$set",)))),  # native
             {"list": [1, 2, {"$x": 1}], "$set": GONE}),
            (Update((UnsetOp(("inner", NUL)),)),  # unsets strings: replace
             {"inner": {k: v for k, v in inner.items() if k != NUL}}),
            (Update((SetOp(("a.b",), {"c.d": 1}), IncOp(("inner", "a.b", "1", "a.b"), 1))),
             {"a.b": {"c.d": 1},  # a dotted step: replace
              "inner": {**inner, "a.b": [inner["a.b"][0], {"a.b": 6}]}}),
            (Update((SetOp(("new.key", "$y"), {"$z": {NUL: [1]}}),)),  # dotted: replace
             {"new.key": {"$y": {"$z": {NUL: [1]}}}}),
            (Update((PullOp(("list",), 1), SetOp(("$set", "$inc"), "s"))),  # native
             {"list": [2], "$set": {"$inc": "s"}}),
        ]
        for update, changes in shapes:
            base = {"$set": {"$inc": 1}, "list": [1, 2]}
            (original,) = await _seed(store, odd(**base))
            expected = odd(**{**base, **changes})
            expected = {key: value for key, value in expected.items() if value is not GONE}
            changed = await store.update(C, original["_id"], update, stamp={},
                                         expected_version=original["_version"])
            stored = await store.get(C, original["_id"])
            for result in (changed, stored):
                assert {k: v for k, v in result.items() if not k.startswith("_")} \
                    == expected, update
                assert result["_version"] == original["_version"] + 1
            found = await store.find(C, Query(filter=Eq(("$where",), expected["$where"])))
            assert [d["_id"] for d in found] == [original["_id"]], update
            with pytest.raises(VersionMismatch):  # the version still guards it
                await store.update(C, original["_id"], update, stamp={},
                                   expected_version=original["_version"])
            await store.delete(C, [original["_id"]])

    async def test_odd_keys_are_projected_away_exactly(self, store: DocumentStore) -> None:
        (original,) = await _seed(store, {"a": {"b": 1, "c": 2}, "a.b": 3, "$where": 4,
                                          "#\U0010ffff": 5, "#\U0010ffff$where": 6})
        (dropped,) = await store.find(C, Query(projection=Projection(
            (("a.b",), ("$where",), ("#\U0010ffff",)), False)))
        assert {k: v for k, v in dropped.items() if not k.startswith("_")} == {
            "a": {"b": 1, "c": 2}, "#\U0010ffff$where": 6}
        kept = await store.find(C, Query(projection=Projection(
            (("a.b",), ("$where",), ("#\U0010ffff$where",)), True)))
        assert kept == [{"_id": original["_id"], "a.b": 3, "$where": 4,
                         "#\U0010ffff$where": 6}]

    async def test_objects_compare_by_odd_keys_in_order(self, store: DocumentStore) -> None:
        # stored keys keep the order of the keys they stand for (Mongo shifts "$" keys)
        keys = ["#", "#z", "#\U0010ffff", "#\U0010ffff#", "$", "$a", "$a\x00", "%", "a"]
        documents = await _seed(store, *({"keyed": {key: 1}, "i": i}
                                         for i, key in enumerate(keys)))
        for i, key in enumerate(keys):
            above = await store.find(C, Query(filter=Gt(("keyed",), {key: 1}),
                                              sort=(SortKey(("i",)),)))
            assert [d["i"] for d in above] == list(range(i + 1, len(keys))), key
        by_keys = await store.find(C, Query(sort=(SortKey(("keyed",), -1),)))
        assert [d["_id"] for d in by_keys] == [d["_id"] for d in reversed(documents)]
