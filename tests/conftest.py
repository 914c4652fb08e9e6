from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.register_assert_rewrite("docbase.testing.contract", "docbase.testing.differential_suite")

from tests.backends import BACKENDS  # noqa: E402

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
