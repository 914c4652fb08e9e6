"""``GET /health/ready`` tells an anonymous caller the status alone (issue 30).

It used to name every database of the server (``store:<name>``) and why a store
failed to anyone. Over real HTTPS, with the database under test on every backend and a
second one in memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.http.testing import LiveDocbase, live_docbase


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    async with MemoryDocumentStore() as other_store:
        databases = {"main": Database(*stores, name="main"),
                     "hidden-tenant": Database(other_store, MemoryBlobStore(),
                                               name="hidden-tenant")}
        async with live_docbase(databases, tmp_path) as running:
            yield running


@pytest.mark.parametrize("credential", [
    {}, {"x-apikey": "not-a-key-of-anyone"}, {"authorization": "Bearer not-a-token"},
    "scoped",
])
async def test_anyone_but_an_operator_gets_the_status_alone(
        live: LiveDocbase, credential: Any) -> None:
    if credential == "scoped":
        credential = {"x-apikey": await live.key(paths=["/rest/**"])}
    answer = await live.client.get("/health/ready", headers=credential)
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok"}
    assert "hidden-tenant" not in answer.text
    assert "main" not in answer.text


async def test_a_full_access_key_reads_its_own_databases_check(live: LiveDocbase) -> None:
    answer = await live.client.get("/health/ready", headers=live.auth("main"))
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "checks": {"store:main": "ok"}}
    tenant = await live.client.get("/health/ready", headers=live.auth("hidden-tenant"))
    assert tenant.json() == {"status": "ok"}  # a key of another database: anonymous here
