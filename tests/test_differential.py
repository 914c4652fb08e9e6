"""Differential properties: SQLite, PostgreSQL and MongoDB answer what the reference does.

The memory adapter runs ``docbase.core.evaluate`` itself; the SQL adapter compiles the
same AST to SQL, the Mongo adapter to MongoDB queries, sorts, pipelines and updates.
The properties live in ``docbase.testing.differential_suite``; this module only says
how to open each candidate store (the engine or database is reused by all examples of
one test function). Results are compared with ``json_equal``: key order counts,
``1 == 1.0``, ``True != 1``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

from docbase.core.documents import Document
from docbase.core.settings import AutoIndexing
from docbase.testing.differential_suite import differential_properties
from tests.backends import (
    IN_CI,
    MONGO_URL_VARIABLE,
    mongo_backend,
    postgresql_schema,
    sql_backend,
)

pytestmark = pytest.mark.xdist_group("differential")
"""All on one xdist worker: a property's store keeps SQLAlchemy's compiled statements of
hundreds of generated queries (35 MB and more) until it closes, and the worker's heap
stays that much larger after (freed, but fragmented); spread over both workers, the
module grew each by 90-110 MB of the suite's peak (docs/testing.md, "Memory")."""

CI_EXAMPLES = 250
"""Examples per property and engine under CI (the "dev" count is 60; SQL and Mongo).

At 500 the differential properties took 470 of the suite's 2,100 worker-seconds, more
than a fifth, for one module of 46 (docs/testing.md, "Time"); 250 keeps four times the
developers' count within the suite's time."""


class TestSqlDifferential(differential_properties(CI_EXAMPLES if IN_CI else 60)):  # type: ignore[misc]
    @pytest.fixture(params=["sqlite", "sqlite-auto-index",
                            pytest.param("postgresql", marks=pytest.mark.postgres)])
    async def candidate(self, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
        """One open SQL store per test function, shared by all its examples.

        ``sqlite-auto-index`` indexes every path after its first unindexed find with a
        limit (``docs/sql-adapter.md``, "Automatic indexes"): the answers must not change.
        """
        async with contextlib.AsyncExitStack() as stack:
            if request.param.startswith("sqlite"):
                url = "sqlite://"
            else:
                url = await stack.enter_async_context(postgresql_schema())
            policy = AutoIndexing(queries=1) if request.param == "sqlite-auto-index" else None
            store, _ = await stack.enter_async_context(sql_backend(url, auto_index=policy))
            yield store


@pytest.mark.mongo
class TestMongoDifferential(differential_properties(CI_EXAMPLES if IN_CI else 40)):  # type: ignore[misc]
    @pytest.fixture(params=["mongo"])
    async def candidate(self, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
        """One fresh database on the MongoDB under test per test function."""
        async with mongo_backend(request) as (store, _):
            yield store

    def comparable_update(self, stored: Document) -> bool:
        """On the wire server, only documents whose key order JavaScript keeps."""
        return bool(os.environ.get(MONGO_URL_VARIABLE)) or _js_key_order(stored)


def _js_key_order(value: Any) -> bool:
    """Whether every object keeps its key order in a JavaScript object (see docs)."""
    if isinstance(value, list):
        return all(_js_key_order(item) for item in value)
    if not isinstance(value, dict):
        return True
    keys = list(value)
    integers = [k for k in keys if k.isdigit() and (k == "0" or not k.startswith("0"))
                and int(k) < 2**32 - 1]
    hoisted = sorted(integers, key=int) + [k for k in keys if k not in integers]
    return keys == hoisted and all(_js_key_order(item) for item in value.values())
