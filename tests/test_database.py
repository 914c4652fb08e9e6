"""The Database facade on the memory adapter: writes, reads and their shapes, children,
cascades, permissions, versions, limits and hooks. Expected values are written out.

The tests taking ``db`` run on the remote client too (``docbase.connect("https://...")``
against a served SQLite and PostgreSQL database): the same calls, the same answers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.auth.principal import Principal
from docbase.core.database import Collection, Database
from docbase.core.documents import META_FIELDS
from docbase.core.errors import (
    Conflict,
    Forbidden,
    InvalidId,
    InvalidQuery,
    NotFound,
    PayloadTooLarge,
    VersionMismatch,
)
from docbase.core.events import WriteEvent
from docbase.core.hooks import HookPoint, HookRegistry
from docbase.core.ids import is_object_id
from docbase.core.query import Aggregate, Query, ReadOptions, parse_cursor, parse_list_params
from docbase.core.settings import Limits
from tests.remote_backends import EMBEDDED_ONLY, REMOTE_ENGINES, remote_database

TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
USER = Principal(author="joe@example.com", kind="user", full_access=False)
SCOPED_KEY = Principal(author="api", kind="key", full_access=False, key_id="k1")
HOOK = Principal(author="api", kind="hook", full_access=False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test of ``EMBEDDED_ONLY`` is made for the embedded database alone, not made and
    skipped for the remote ones (the reasons are in tests/remote_backends.py)."""
    if metafunc.definition.originalname in EMBEDDED_ONLY:
        metafunc.definition.add_marker(
            pytest.mark.parametrize("db", ["embedded"], indirect=True))


@pytest.fixture(params=["embedded", *REMOTE_ENGINES])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """The embedded database, and the remote client on a served one (tests/remote_backends.py)."""
    if request.param != "embedded":
        async with remote_database(request, request.param, tmp_path) as remote:
            yield remote
        return
    async with Database(MemoryDocumentStore(), MemoryBlobStore()) as database:
        yield database


async def seed_people(db: Database) -> dict[str, dict[str, Any]]:
    """Joe, Jane, Ann, Bob, inserted in that order (so in ``_id`` order)."""
    people = db.collection("people")
    made = await people.insert_many([
        {"name": "Joe", "age": 17, "city": "Oslo", "team": "red", "score": 10},
        {"name": "Jane", "age": 30, "city": "Bergen", "team": "blue", "score": 5},
        {"name": "Ann", "age": 45, "city": "Oslo", "team": "blue", "score": 7.5},
        {"name": "Bob", "team": "red", "score": "n/a"},
    ])
    return {d["name"]: d for d in made}


def user_fields(document: dict[str, Any]) -> dict[str, Any]:
    """What a read returns without metafields."""
    return {k: v for k, v in document.items() if k not in META_FIELDS}


# ---------------------------------------------------------------------------- writes


async def test_insert_stamps_system_fields_and_get_returns_the_document(db: Database) -> None:
    people = db.collection("people")
    created = await people.insert({"name": "Joe", "age": 17})
    assert is_object_id(created["_id"])
    assert created["_version"] == 0
    assert created["_createdby"] == created["_changedby"] == "api"
    assert TIMESTAMP.fullmatch(created["_created"])
    assert created["_changed"] == created["_created"]
    assert set(created) == {"_id", "name", "age", *META_FIELDS}
    assert await people.get(created["_id"]) == created
    assert await people.get(created["_id"], metafields=False) == {
        "_id": created["_id"], "name": "Joe", "age": 17
    }


async def test_system_fields_in_bodies_are_ignored(db: Database) -> None:
    people = db.collection("people")
    foreign = "5f0c0c0c0c0c0c0c0c0c0c0c"
    created = await people.insert({
        "_id": foreign, "_version": 7, "_created": "1999-01-01T00:00:00.000Z",
        "_createdby": "eve", "_changedby": "eve", "_parent_id": foreign,
        "_parent_def": "x", "_parent_field": "y", "name": "Joe",
    })
    assert created["_id"] != foreign
    assert (created["_version"], created["_createdby"]) == (0, "api")
    assert created["_created"] != "1999-01-01T00:00:00.000Z"
    assert not {"_parent_id", "_parent_def", "_parent_field"} & set(created)

    updated = await people.update(created["_id"], {
        "_id": foreign, "_version": 9, "_createdby": "eve", "_created": "x", "name": "Jo",
    })
    assert updated["_id"] == created["_id"]
    assert (updated["_version"], updated["_createdby"]) == (1, "api")
    assert updated["_created"] == created["_created"]
    assert updated["name"] == "Jo"

    patched = await people.patch(created["_id"], {"_version": 0, "_changedby": "eve", "n": 1})
    assert (patched["_version"], patched["_changedby"], patched["n"]) == (2, "api", 1)


async def test_authors_come_from_the_principal(db: Database) -> None:
    created = await db.collection("people", USER).insert({"name": "Joe"})
    assert created["_createdby"] == created["_changedby"] == "joe@example.com"
    updated = await db.collection("people").update(created["_id"], {"age": 18})
    assert updated["_createdby"] == "joe@example.com"
    assert updated["_changedby"] == "api"


async def test_put_merges_and_patch_sets_paths(db: Database) -> None:
    people = db.collection("people")
    joe = await people.insert({"name": "Joe", "address": {"city": "Oslo", "zip": "0150"}})
    put = await people.update(joe["_id"], {"address": {"city": "Bergen"}, "$inc": {"n": "1"}})
    assert user_fields(put) == {"_id": joe["_id"], "name": "Joe",
                                "address": {"city": "Bergen"}, "n": 1}
    patched = await people.patch(joe["_id"], {"address.zip": "5003"})
    assert patched["address"] == {"city": "Bergen", "zip": "5003"}
    assert patched["_version"] == 2
    assert await people.get(joe["_id"]) == patched


async def test_update_conflict_changes_nothing(db: Database) -> None:
    people = db.collection("people")
    joe = await people.insert({"name": "Joe"})
    with pytest.raises(Conflict):
        await people.update(joe["_id"], {"age": 1, "$inc": {"name": 1}})
    assert await people.get(joe["_id"]) == joe


async def test_bad_and_unknown_ids(db: Database) -> None:
    people = db.collection("people")
    with pytest.raises(InvalidId):
        await people.get("nope")
    with pytest.raises(NotFound):
        await people.get("5f0c0c0c0c0c0c0c0c0c0c0c")
    with pytest.raises(NotFound):
        await people.update("5f0c0c0c0c0c0c0c0c0c0c0c", {"a": 1})
    with pytest.raises(NotFound):
        await people.delete("5f0c0c0c0c0c0c0c0c0c0c0c")


# ---------------------------------------------------------------------------- find


async def test_find_with_q_and_h(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    found = await people.find({"age": {"$gt": 18}},
                              {"$orderby": {"age": -1}, "$fields": {"name": 1}})
    assert found == [{"_id": p["Ann"]["_id"], "name": "Ann"},
                     {"_id": p["Jane"]["_id"], "name": "Jane"}]
    assert await people.find({"city": "Oslo"}, {"$skip": 1}) == [p["Ann"]]
    assert await people.find() == list(p.values())
    assert await people.count({"team": "red"}) == 2
    assert await people.count() == 4


async def test_find_refuses_a_page_over_the_limit(db: Database) -> None:
    with pytest.raises(InvalidQuery, match="max may be at most 10000"):
        await db.collection("people").find(h={"$max": 10_001})


async def test_unknown_collection_reads_as_empty(db: Database) -> None:
    assert await db.collection("nothing").find() == []
    assert await db.collection("nothing").read(Query()) == []


# ---------------------------------------------------------------------------- read shapes


async def test_read_returns_documents_without_meta_fields(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    assert await people.read(Query()) == [user_fields(d) for d in p.values()]
    assert await people.read(Query(), ReadOptions(metafields=True)) == list(p.values())


async def test_read_with_totals(db: Database) -> None:
    p = await seed_people(db)
    result = await db.collection("people").read(Query(skip=1, limit=2), ReadOptions(totals=True))
    # a full page: the cursor of the next one, beside totals, names its last document
    assert parse_cursor(result.pop("next")).id == p["Ann"]["_id"]
    assert result == {
        "data": [user_fields(p["Jane"]), user_fields(p["Ann"])],
        "totals": {"total": 4, "count": 2, "skip": 1, "max": 2},
    }


async def test_read_with_count_reads_no_documents(db: Database) -> None:
    await seed_people(db)
    query, options = parse_list_params({"q": ['{"city": "Oslo"}'], "totals": ["true"],
                                        "count": ["true"]})
    assert await db.collection("people").read(query, options) == {
        "data": [], "totals": {"total": 2, "count": 2, "skip": 0, "max": 1000},
    }


async def test_read_grouped_by_one_field(db: Database) -> None:
    p = await seed_people(db)
    result = await db.collection("people").read(Query(groupby=(("city",),)))
    assert result == {
        "null": [user_fields(p["Bob"])],
        "Bergen": [user_fields(p["Jane"])],
        "Oslo": [user_fields(p["Joe"]), user_fields(p["Ann"])],
    }
    assert list(result) == ["null", "Bergen", "Oslo"]


async def test_read_grouped_by_two_fields_nests(db: Database) -> None:
    p = await seed_people(db)
    query, options = parse_list_params({"groupby": ["city", "team"]})
    result = await db.collection("people").read(query, options)
    assert result == {
        "null": {"red": [user_fields(p["Bob"])]},
        "Bergen": {"blue": [user_fields(p["Jane"])]},
        "Oslo": {"blue": [user_fields(p["Ann"])], "red": [user_fields(p["Joe"])]},
    }
    assert list(result["Oslo"]) == ["blue", "red"]


async def test_read_aggregates_without_groupby(db: Database) -> None:
    await seed_people(db)
    query = Query(aggregates=(Aggregate("SUM", "score"), Aggregate("AVG", "score"),
                              Aggregate("MIN", "age"), Aggregate("MAX", "age"),
                              Aggregate("COUNT", "")))
    assert await db.collection("people").read(query) == {
        "SUM score": 22.5, "AVG score": 7.5, "MIN age": 17, "MAX age": 45, "COUNT ": 4,
    }


async def test_read_aggregates_with_groupby_and_grand_total(db: Database) -> None:
    await seed_people(db)
    query, options = parse_list_params({
        "groupby": ["team"], "aggregate": ["SUM:score", "COUNT:people"],
        "h": ['{"$aggregate-grand-total": true}'],
    })
    result = await db.collection("people").read(query, options)
    assert result == {
        "blue": {"SUM score": 12.5, "COUNT people": 2},
        "red": {"SUM score": 10, "COUNT people": 2},
        "$grand-total": {"SUM score": 22.5, "COUNT people": 4},
    }
    assert list(result) == ["blue", "red", "$grand-total"]


async def test_read_aggregates_of_a_filtered_set(db: Database) -> None:
    await seed_people(db)
    query, _ = parse_list_params({"q": ['{"city": "Oslo"}'], "aggregate": ["AVG:age",
                                                                          "MIN:name"]})
    assert await db.collection("people").read(query) == {"AVG age": 31.0, "MIN name": "Ann"}


async def test_read_aggregates_of_nothing(db: Database) -> None:
    query = Query(aggregates=(Aggregate("SUM", "x"), Aggregate("AVG", "x"),
                              Aggregate("MAX", "x"), Aggregate("COUNT", "")))
    assert await db.collection("people").read(query) == {
        "SUM x": 0, "AVG x": None, "MAX x": None, "COUNT ": 0,
    }


# ---------------------------------------------------------------------------- children


async def test_children_are_created_listed_and_read_under_their_parent(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    joe_orders = people.children(p["Joe"]["_id"], "orders")
    book = await joe_orders.insert({"item": "book"})
    pen, = await joe_orders.insert_many([{"item": "pen"}])
    await people.children(p["Jane"]["_id"], "orders").insert({"item": "cup"})

    assert (book["_parent_id"], book["_parent_def"], book["_parent_field"]) == (
        p["Joe"]["_id"], "people", "orders"
    )
    assert (book["_version"], book["_createdby"]) == (0, "api")
    assert await joe_orders.find() == [book, pen]
    assert await joe_orders.count() == 2
    assert await joe_orders.get(book["_id"]) == book
    assert await joe_orders.read(Query()) == [user_fields(book), user_fields(pen)]
    assert user_fields(book) == {"_id": book["_id"], "item": "book",
                                 "_parent_id": p["Joe"]["_id"], "_parent_def": "people",
                                 "_parent_field": "orders"}
    assert await db.child_fields("people") == ["orders"]


async def test_a_child_of_another_parent_is_not_found(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    book = await people.children(p["Joe"]["_id"], "orders").insert({"item": "book"})
    janes = people.children(p["Jane"]["_id"], "orders")
    with pytest.raises(NotFound):
        await janes.get(book["_id"])
    with pytest.raises(NotFound):
        await janes.update(book["_id"], {"item": "stolen"})
    with pytest.raises(NotFound):
        await janes.delete(book["_id"])
    assert await janes.delete_many([book["_id"]]) == []
    assert await janes.find() == []
    assert (await people.children(p["Joe"]["_id"], "orders").get(book["_id"]))["item"] == "book"


async def test_children_need_an_existing_parent(db: Database) -> None:
    orphans = db.collection("people").children("5f0c0c0c0c0c0c0c0c0c0c0c", "orders")
    with pytest.raises(NotFound):
        await orphans.insert({"item": "book"})
    assert await db.collection("orders").find() == []


async def test_fetchchildren_embeds_children_arrays(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    book = await people.children(p["Joe"]["_id"], "orders").insert({"item": "book"})
    pen = await people.children(p["Joe"]["_id"], "orders").insert({"item": "pen"})
    cup = await people.children(p["Jane"]["_id"], "orders").insert({"item": "cup"})

    result = await people.read(Query(filter=parse_list_params(
        {"q": ['{"name": {"$in": ["Joe", "Jane", "Ann"]}}']})[0].filter),
        ReadOptions(fetchchildren=True))
    assert result == [
        {**user_fields(p["Joe"]), "orders": [user_fields(book), user_fields(pen)]},
        {**user_fields(p["Jane"]), "orders": [user_fields(cup)]},
        {**user_fields(p["Ann"]), "orders": []},
    ]
    one = await people.get(p["Jane"]["_id"], fetchchildren=True, metafields=False)
    assert one == {**user_fields(p["Jane"]), "orders": [user_fields(cup)]}


async def test_deleting_a_parent_deletes_children_and_grandchildren(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    joe_orders = people.children(p["Joe"]["_id"], "orders")
    order = await joe_orders.insert({"item": "book"})
    line = await joe_orders.children(order["_id"], "lines").insert({"qty": 2})
    janes = await people.children(p["Jane"]["_id"], "orders").insert({"item": "cup"})

    assert await people.delete(p["Joe"]["_id"]) == [p["Joe"]["_id"]]
    with pytest.raises(NotFound):
        await db.collection("orders").get(order["_id"])
    with pytest.raises(NotFound):
        await db.collection("lines").get(line["_id"])
    assert await db.collection("orders").find() == [janes]


async def test_delete_many_and_delete_where_cascade_too(db: Database) -> None:
    p = await seed_people(db)
    people = db.collection("people")
    joes = await people.children(p["Joe"]["_id"], "orders").insert({"item": "book"})
    janes = await people.children(p["Jane"]["_id"], "orders").insert({"item": "cup"})
    anns = await people.children(p["Ann"]["_id"], "orders").insert({"item": "pen"})

    missing = "5f0c0c0c0c0c0c0c0c0c0c0c"
    assert await people.delete_many([p["Joe"]["_id"], missing]) == [p["Joe"]["_id"]]
    assert sorted(await people.delete_where({"city": "Oslo"})) == [p["Ann"]["_id"]]
    assert await db.collection("orders").find() == [janes]
    assert joes != anns
    assert [d["name"] for d in await people.find()] == ["Jane", "Bob"]


async def test_delete_where_needs_full_access(db: Database) -> None:
    p = await seed_people(db)
    with pytest.raises(Forbidden, match="full-access"):
        await db.collection("people", SCOPED_KEY).delete_where({"team": "red"})
    with pytest.raises(Forbidden):
        await db.collection("people", USER).delete_where({})
    assert await db.collection("people").count() == 4
    deleted = await db.collection("people", HOOK).delete_where({"team": "red"})
    assert sorted(deleted) == sorted([p["Joe"]["_id"], p["Bob"]["_id"]])
    assert await db.collection("people").count() == 2


async def test_delete_with_a_stale_version_is_refused(db: Database) -> None:
    people = db.collection("people")
    joe = await people.insert({"name": "Joe"})
    await people.update(joe["_id"], {"age": 18})
    with pytest.raises(VersionMismatch):
        await people.delete(joe["_id"], expected_version=0)
    with pytest.raises(VersionMismatch):
        await people.update(joe["_id"], {"age": 19}, expected_version=0)
    assert (await people.get(joe["_id"]))["age"] == 18
    assert (await people.patch(joe["_id"], {"age": 20}, expected_version=1))["_version"] == 2
    assert await people.delete(joe["_id"], expected_version=2) == [joe["_id"]]
    assert await people.count() == 0


# ---------------------------------------------------------------------------- limits


async def test_bulk_insert_over_the_limit_inserts_nothing() -> None:
    async with Database(MemoryDocumentStore(), limits=Limits(max_bulk=3)) as db:
        people = db.collection("people")
        with pytest.raises(PayloadTooLarge, match="at most 3"):
            await people.insert_many([{"n": i} for i in range(4)])
        assert await people.count() == 0
        with pytest.raises(PayloadTooLarge):
            await people.delete_many(["5f0c0c0c0c0c0c0c0c0c0c0c"] * 4)
        assert len(await people.insert_many([{"n": i} for i in range(3)])) == 3


async def test_bulk_insert_with_a_bad_element_inserts_nothing(db: Database) -> None:
    people = db.collection("people")
    with pytest.raises(InvalidQuery, match="JSON object"):
        await people.insert_many([{"n": 1}, ["not", "an", "object"]])  # type: ignore[list-item]
    assert await people.count() == 0


async def test_bulk_insert_with_a_duplicate_unique_value_inserts_nothing(db: Database) -> None:
    people = db.collection("people")
    await people.ensure_index("email", unique=True)
    await people.insert({"email": "a@x.no"})
    with pytest.raises(Conflict):
        await people.insert_many([{"email": "b@x.no"}, {"email": "a@x.no"}])
    assert [d["email"] for d in await people.find()] == ["a@x.no"]


# ---------------------------------------------------------------------------- hooks


def recording_hooks(log: list[tuple[str, str, Any]]) -> HookRegistry:
    hooks = HookRegistry()
    for name in (HookPoint.BEFORE_INSERT, HookPoint.AFTER_INSERT, HookPoint.BEFORE_UPDATE,
                 HookPoint.AFTER_UPDATE, HookPoint.BEFORE_DELETE, HookPoint.AFTER_DELETE):
        async def record(event: WriteEvent, name: str = name) -> None:
            log.append((name, event.collection,
                        len(event.documents) if name.endswith("insert") else list(event.ids)))
        hooks.on(name, record)
    return hooks


async def test_hooks_run_before_and_after_each_write() -> None:
    log: list[tuple[str, str, Any]] = []
    async with Database(MemoryDocumentStore(), hooks=recording_hooks(log)) as db:
        people = db.collection("people")
        joe = await people.insert({"name": "Joe"})
        await people.update(joe["_id"], {"age": 1})
        await people.delete(joe["_id"])
    assert log == [
        ("before_insert", "people", 1), ("after_insert", "people", 1),
        ("before_update", "people", [joe["_id"]]), ("after_update", "people", [joe["_id"]]),
        ("before_delete", "people", [joe["_id"]]), ("after_delete", "people", [joe["_id"]]),
    ]


async def test_a_before_insert_hook_may_change_the_documents() -> None:
    hooks = HookRegistry()

    async def stamp(event: WriteEvent) -> None:
        for document in event.documents:
            document["checked"] = True

    hooks.on(HookPoint.BEFORE_INSERT, stamp, collection="people")
    async with Database(MemoryDocumentStore(), hooks=hooks) as db:
        joe = await db.collection("people").insert({"name": "Joe"})
        cup = await db.collection("things").insert({"name": "cup"})
        assert (await db.collection("people").get(joe["_id"]))["checked"] is True
        assert "checked" not in await db.collection("things").get(cup["_id"])


async def test_a_before_insert_hook_raising_refuses_the_write() -> None:
    hooks = HookRegistry()
    after: list[WriteEvent] = []

    async def refuse(event: WriteEvent) -> None:
        if any(d.get("name") == "Eve" for d in event.documents):
            raise Forbidden("no Eves")

    async def remember(event: WriteEvent) -> None:
        after.append(event)

    hooks.on(HookPoint.BEFORE_INSERT, refuse)
    hooks.on(HookPoint.AFTER_INSERT, remember)
    async with Database(MemoryDocumentStore(), hooks=hooks) as db:
        people = db.collection("people")
        with pytest.raises(Forbidden, match="no Eves"):
            await people.insert_many([{"name": "Joe"}, {"name": "Eve"}])
        assert await people.count() == 0
        assert after == []
        await people.insert({"name": "Joe"})
        assert await people.count() == 1


async def test_a_before_update_hook_raising_changes_nothing() -> None:
    hooks = HookRegistry()

    async def refuse(event: WriteEvent) -> None:
        raise Forbidden("read only")

    hooks.on(HookPoint.BEFORE_UPDATE, refuse)
    async with Database(MemoryDocumentStore(), hooks=hooks) as db:
        people: Collection = db.collection("people")
        joe = await people.insert({"name": "Joe"})
        with pytest.raises(Forbidden):
            await people.update(joe["_id"], {"name": "Jo"})
        assert await people.get(joe["_id"]) == joe

