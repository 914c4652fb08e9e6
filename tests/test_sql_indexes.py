"""Indexed equality and range queries use the expression indexes (shown by EXPLAIN)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.documents import new_document
from docbase.core.errors import Conflict
from docbase.core.query import Between, Eq, Gt, In, Lt, Query
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
