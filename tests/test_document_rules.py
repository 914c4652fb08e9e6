"""The document rules of a JSON request body hold for library writes too, on every engine.

Each refused write raises ``InvalidQuery`` (400 over HTTP) and stores nothing; keys with
NUL, ``$`` or ``.`` are accepted and read back exactly. Expected values are written out.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest

from docbase.core.database import Database
from docbase.core.errors import InvalidQuery
from docbase.core.hooks import HookPoint
from docbase.core.update import IncOp, SetOp, Update


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "integer_beyond_int64": ({"n": 2**63}, "outside the 64-bit range"),
    "integer_below_int64": ({"n": [-(2**63) - 1]}, "outside the 64-bit range"),
    "nan": ({"x": float("nan")}, "which JSON cannot express"),
    "infinity": ({"x": {"y": float("inf")}}, "which JSON cannot express"),
    "nul_in_string": ({"s": "a\x00b"}, "NUL character"),
    "nul_in_nested_string": ({"s": [{"t": "\x00"}]}, "NUL character"),
    "set": ({"tags": {"a", "b"}}, "a set"),
    "bytes": ({"raw": b"\x00\x01"}, "a bytes"),
    "datetime": ({"when": datetime.datetime(2020, 1, 1)}, "a datetime"),
    "decimal": ({"price": decimal.Decimal("1.5")}, "a Decimal"),
    "tuple": ({"pair": (1, 2)}, "a tuple"),
    "integer_key": ({"inner": {1: "one"}}, "a key that is not a string"),
    "nested_10000_deep": (_nested(10_000), "nested deeper than 64 levels"),
    "nested_65_deep": (_nested(65), "nested deeper than 64 levels"),
}


@pytest.fixture
def db(stores: Any) -> Database:
    return Database(*stores)


@pytest.mark.parametrize("case", list(REFUSED))
async def test_library_insert_refuses_what_http_refuses_and_stores_nothing(
    db: Database, case: str
) -> None:
    body, message = REFUSED[case]
    things = db.collection("things")
    with pytest.raises(InvalidQuery, match=message):
        await things.insert(body)
    with pytest.raises(InvalidQuery, match=message):
        await things.insert_many([{"ok": 1}, body])
    assert await things.count() == 0


async def test_library_updates_refuse_bad_values_and_change_nothing(db: Database) -> None:
    things = db.collection("things")
    created = await things.insert({"n": 1, "s": "x"})
    for body in ({"s": "a\x00"}, {"$set": {"t": {2**64: 1}}}, {"$push": {"l": {"x"}}},
                 {"$inc": {"n": 2**63}}):
        with pytest.raises(InvalidQuery):
            await things.update(created["_id"], body)
    with pytest.raises(InvalidQuery, match="which JSON cannot express"):
        await things.apply(created["_id"], Update((IncOp(("n",), float("inf")),)))
    with pytest.raises(InvalidQuery, match="nested deeper than 64 levels"):
        await things.apply(created["_id"], Update((SetOp(("deep",), _nested(100)),)))
    assert await things.get(created["_id"]) == created


async def test_a_before_hook_cannot_store_what_the_rules_refuse(db: Database) -> None:
    async def add_a_set(write: Any) -> None:
        for document in write.documents:
            document["tags"] = {"a"}

    db.hooks.on(HookPoint.BEFORE_INSERT, add_a_set, collection="things")
    with pytest.raises(InvalidQuery, match="a set"):
        await db.collection("things").insert({"n": 1})
    assert await db.collection("things").count() == 0


async def test_library_stores_odd_keys_exactly(db: Database) -> None:
    things = db.collection("things")
    body = {"a\x00b": 1, "\x01": {"\x00": [2, {"$where": "x"}]}, "a.b": 3,
            "n": 2**63 - 1, "m": -(2**63), "f": 1.5, "t": True, "z": None}
    created = await things.insert(body)
    assert {k: v for k, v in created.items() if not k.startswith("_")} == body
    assert await things.get(created["_id"]) == created
    assert [d["_id"] for d in await things.find({"a\x00b": 1})] == [created["_id"]]
    changed = await things.patch(created["_id"], {"\x01.\x00": ["y\x01"]})
    assert changed["\x01"] == {"\x00": ["y\x01"]}
