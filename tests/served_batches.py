"""What tests/test_batch_crash.py asks of a served database: a client, its documents."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

from tests.test_serve_harness import Served


@contextlib.asynccontextmanager
async def client_of(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``served`` with its full-access key."""
    async with httpx.AsyncClient(base_url=served.url, verify=served.ssl_context(), timeout=30,
                                 headers={"x-apikey": served.admin_key}) as client:
        yield client


async def stored_documents(served: Served, collections: Sequence[str]) -> list[dict[str, Any]]:
    """Every document of ``collections``."""
    found: list[dict[str, Any]] = []
    async with client_of(served) as client:
        for name in collections:
            answer = await client.get(f"/rest/{name}", params={"max": 10000})
            answer.raise_for_status()
            found.extend(answer.json())
    return found
