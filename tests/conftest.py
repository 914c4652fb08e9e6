from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

pytest.register_assert_rewrite("docbase.testing.contract", "docbase.testing.differential_suite")

from tests.backends import BACKENDS, postgresql_schema, synchronously  # noqa: E402

_MARKS = {"postgresql": pytest.mark.postgres, "mongo": pytest.mark.mongo}


@pytest.fixture(params=[pytest.param(name, marks=[_MARKS[name]] if name in _MARKS else [])
                        for name in BACKENDS])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An open, empty (DocumentStore, BlobStore) pair of every backend."""
    async with BACKENDS[request.param](request) as pair:
        yield pair


@pytest.fixture
def store(stores: Any) -> Any:
    return stores[0]


@pytest.fixture
def blob_store(stores: Any) -> Any:
    return stores[1]


@pytest.fixture
def schema_url() -> Iterator[str]:
    """A fresh PostgreSQL schema's storage URL (skipped locally without PostgreSQL).

    Synchronous, for tests that start ``docbase serve`` processes on it.
    """
    yield from synchronously(postgresql_schema())
