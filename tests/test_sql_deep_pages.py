"""A page at an offset of a whole collection skips its rows in the key index alone.

``SELECT body ... WHERE id IN (SELECT id ... ORDER BY id LIMIT l OFFSET s)``
(``docbase/adapters/sql/pages.py``, ``deferred_page``) on SQLite as on PostgreSQL: the
plain ``OFFSET`` made SQLite look every skipped row up in the table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.query import Gt, Query, SortKey
from tests.backends import numbered, sql_backend, sql_url, traced_statements


@pytest.fixture(params=["sqlite-file", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path,
                ) -> AsyncIterator[SqlDocumentStore]:
    async with sql_url(request.param, tmp_path) as url, sql_backend(url) as (opened, _b):
        await opened.insert("items", [numbered(n) for n in range(300)])
        yield opened


async def test_a_deep_page_holds_the_rows_at_its_offset_in_key_order(
    store: SqlDocumentStore,
) -> None:
    ids = sorted(numbered(n)["_id"] for n in range(300))
    page = await store.find("items", Query(skip=250, limit=20))
    assert [d["_id"] for d in page] == ids[250:270]
    encoded = await store.find_encoded("items", Query(skip=290, limit=20), hide=("n",))
    assert len(encoded) == 10
    assert await store.find("items", Query(skip=300, limit=20)) == []


async def test_only_a_plain_page_takes_the_key_index_way_on_sqlite(tmp_path: Path) -> None:
    async with sql_backend(f"sqlite:///{tmp_path}/pages.db") as (store, _b):
        await store.insert("items", [numbered(n) for n in range(300)])
        statements = traced_statements(store)

        await store.find("items", Query(skip=250, limit=20))
        assert [s for s in statements if "IN (SELECT" in s and "OFFSET 250" in s]
        statements.clear()
        filtered = await store.find("items", Query(filter=Gt(("n",), 10), skip=250, limit=20))
        assert [d["n"] for d in filtered] == list(range(261, 281))
        await store.find("items", Query(sort=(SortKey(("n",), -1),), skip=250, limit=20))
        assert not [s for s in statements if "IN (SELECT" in s]
