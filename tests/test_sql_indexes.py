"""Indexed equality and range queries use the expression indexes (shown by EXPLAIN)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.documents import new_document
from docbase.core.errors import Conflict
from docbase.core.query import Between, Eq, Gt, In, Lt, Query, SortKey
from tests.backends import sql_backend, sql_url

ROWS = 5000


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    async with contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(sql_url(request.param, tmp_path))
        store, _ = await stack.enter_async_context(sql_backend(url))
        bodies = [{"email": f"user{i}@example.com", "age": i % 100, "tags": ["t", i % 7],
                   "address": {"city": f"city{i % 50}"}} for i in range(ROWS)]
        await store.insert("people", [new_document(b, "api") for b in bodies])
        await store.ensure_index("people", ("email",), unique=True)
        await store.ensure_index("people", ("age",))
        await store.ensure_index("people", ("address", "city"))
        yield store


def _uses_index(plan: str, dialect: str) -> bool:
    if dialect == "sqlite":
        return "USING INDEX c_" in plan and "SCAN people" not in plan
    return "Index Scan" in plan and "Seq Scan" not in plan


@pytest.mark.parametrize("filter", [
    Eq(("email",), "user42@example.com"),
    Eq(("address", "city"), "city7"),
    Eq(("age",), 42),
    In(("age",), (3, 4)),
    Gt(("email",), "user999"),
    Lt(("age",), 1),
    Between(("age",), 10, 11),
], ids=["eq-string", "eq-nested", "eq-number", "in", "gt-string", "lt-number", "between"])
async def test_indexed_equality_and_range_use_the_index(store: SqlDocumentStore,
                                                        filter: Any) -> None:
    plan = await store.explain("people", filter)
    print(f"\n{store.dialect.name} plan for {filter!r}:\n{plan}")
    assert _uses_index(plan, store.dialect.name), plan
    found = await store.find("people", Query(filter=filter, limit=None))
    assert found  # and the answer is still right (checked against the data below)
    if isinstance(filter, Eq) and filter.path == ("email",):
        assert [d["email"] for d in found] == ["user42@example.com"]


async def test_unindexed_equality_scans(store: SqlDocumentStore) -> None:
    plan = await store.explain("people", Eq(("nickname",), "x"))
    assert not _uses_index(plan, store.dialect.name), plan


async def test_unique_index_ignores_missing_and_refuses_repeats(store: SqlDocumentStore) -> None:
    await store.insert("people", [new_document({"age": 1}, "api") for _ in range(3)])
    with pytest.raises(Conflict):
        await store.insert("people", [new_document({"email": "user1@example.com"}, "api")])
    with pytest.raises(Conflict):
        await store.ensure_index("people", ("age",), unique=True)


async def test_indexed_filter_and_sort_with_limit_are_one_index_scan(
        store: SqlDocumentStore) -> None:
    # price > 50 ORDER BY price DESC LIMIT 20 over an indexed path: the plain stream of
    # the page (pages.py) walks the key index in order and stops, with no sort of the
    # table; a few documents whose price is an array (or a string) sort among them
    bodies: list[dict[str, Any]] = [{"price": round(i * 0.37 % 100, 2)} for i in range(ROWS)]
    bodies += [{"price": [10, 99.995]}, {"price": [51]}, {"price": "cheap"}, {"price": []}]
    await store.insert("items", [new_document(b, "api") for b in bodies])
    await store.ensure_index("items", ("price",))  # (PostgreSQL: and ANALYZE)
    query = Query(filter=Gt(("price",), 50), sort=(SortKey(("price",), -1),), limit=20)
    plan = await store.explain("items", query)
    print(f"\n{store.dialect.name} plan for {query!r}:\n{plan}")
    if store.dialect.name == "sqlite":
        # a seek to price > 50 in the key index (SEARCH), walked in order
        assert re.search(r"SEARCH c_\d+ USING INDEX c_\d+_k\d+ \(<expr>>\?", plan), plan
        assert not any(re.fullmatch(r"SCAN c_\d+", line) for line in plan.splitlines()), plan
    else:
        assert re.search(r"Index Scan Backward using c_\d+_k\d+", plan), plan
        assert "Seq Scan" not in plan, plan
    found = [d["price"] for d in await store.find("items", query)]
    expected = sorted((p for p in (b["price"] for b in bodies)
                       if isinstance(p, float | int) and p > 50), reverse=True)
    assert found[0] == [10, 99.995]  # an array sorts descending by its greatest item
    assert found[1:] == expected[:19]


@pytest.mark.postgres
async def test_layout_3_rebuilds_older_postgresql_key_indexes_on_native_parts(
        tmp_path: Path) -> None:
    async with sql_url("postgresql", tmp_path) as url:
        async with sql_backend(url) as (store, _):
            await store.insert("items", [new_document({"price": i % 100}, "api")
                                         for i in range(ROWS)])
            await store.ensure_index("items", ("price",))

            def downgrade(conn: sa.Connection) -> str:  # the key index as layout 2 made it
                number, index = conn.execute(sa.text(
                    "SELECT collection_id, id FROM docbase_indexes WHERE path = '[\"price\"]'"
                )).one()
                name = f"c_{number}_k{index}"
                conn.execute(sa.text(f'DROP INDEX "{name}"'))
                conn.execute(sa.text(f'CREATE INDEX "{name}" ON c_{number} '
                                     "((docbase_scalar_key(doc -> 'price') COLLATE \"C\"))"))
                conn.execute(sa.text("UPDATE docbase_layout SET version = 2"))
                return name

            name = await store.backend.run(downgrade, write=True)
        async with sql_backend(url) as (store, _):  # a new docbase opens the database

            def definition(conn: sa.Connection) -> str:
                return str(conn.execute(sa.text(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = :name"
                    " AND schemaname = current_schema()"),
                    {"name": name}).scalar_one())

            rebuilt = await store.backend.run(definition, write=False)
            assert "docbase_scalar_key" not in rebuilt
            assert "jsonb_typeof" in rebuilt
            plan = await store.explain("items", Query(filter=Gt(("price",), 50),
                                                      sort=(SortKey(("price",), 1),), limit=5))
            assert f"Index Scan using {name}" in plan, plan


@pytest.mark.parametrize("filter", [Eq(("_id",), "ID"), In(("_id",), ("ID", "0" * 24, 7))],
                         ids=["eq", "in"])
async def test_an_id_condition_seeks_the_key(store: SqlDocumentStore, filter: Any) -> None:
    """``_id`` is the id column: a condition on it seeks the table's key, not the bodies
    (it once read ``$._id`` out of every body, as for any other field)."""
    wanted = (await store.find("people", Query(limit=1)))[0]
    filter = (Eq(("_id",), wanted["_id"]) if isinstance(filter, Eq) else
              In(("_id",), (wanted["_id"], "0" * 24, 7)))
    plan = await store.explain("people", filter)
    if store.dialect.name == "sqlite":
        assert "SEARCH c_" in plan, plan
        assert "SCAN" not in plan, plan
    else:
        assert "Index" in plan, plan
        assert "Seq Scan" not in plan, plan
    assert await store.find("people", Query(filter=filter, limit=None)) == [wanted]
