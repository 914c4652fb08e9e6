"""The storage backends every adapter-parametrised test runs against.

Each backend is an async context manager factory yielding an open, empty
``(DocumentStore, BlobStore)`` pair. A backend whose service is missing is skipped with
a reason locally and fails under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

IN_CI = os.environ.get("CI", "").lower() == "true"

Backend = Callable[[pytest.FixtureRequest], contextlib.AbstractAsyncContextManager[Any]]


def service_missing(reason: str) -> None:
    """Skip locally, fail under CI: a test that needs a service never silently passes."""
    if IN_CI:
        pytest.fail(f"required service unavailable under CI=true: {reason}")
    pytest.skip(reason)


@contextlib.asynccontextmanager
async def memory_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with MemoryDocumentStore() as store:
        yield store, MemoryBlobStore()


BACKENDS: dict[str, Backend] = {"memory": memory_backend}
