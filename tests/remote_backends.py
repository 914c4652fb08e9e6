"""The remote client as one more backend of the tests of the public ``Database`` API.

:func:`remote_database` serves a fresh database of an engine over real HTTPS
(:func:`docbase.http.testing.live_docbase`, in the test's event loop) and opens it with
``docbase.connect("https://...")``. A test of the embedded API that cannot hold
remotely is listed in :data:`EMBEDDED_ONLY` with the reason (``docs/client.md`` lists
them too) and made for the embedded database only (``pytest_generate_tests`` in
tests/test_database.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import docbase
from docbase.core.database import Database
from docbase.http.testing import LiveDocbase, live_docbase
from tests.backends import BACKENDS

REMOTE_ENGINES = [pytest.param("remote-sqlite", id="remote-sqlite"),
                  pytest.param("remote-postgresql", id="remote-postgresql",
                               marks=pytest.mark.postgres)]
"""The remote backends: the client against a served SQLite or PostgreSQL database."""

EMBEDDED_ONLY: dict[str, str] = {
    "test_authors_come_from_the_principal": (
        "acts as a library Principal; a remote database acts as its credential (a JWT "
        "user's writes carry its email: tests/test_client.py)"),
    "test_delete_where_needs_full_access": (
        "acts as scoped and hook Principals; over HTTP a scoped key is refused the same "
        "way (tests/test_http_rest.py)"),
    "test_bulk_insert_with_a_duplicate_unique_value_inserts_nothing": (
        "ensure_index is not an HTTP call: a unique field is declared in the schema "
        "(PUT /rest/<c>/_meta)"),
}
"""Tests of tests/test_database.py that cannot hold remotely, and why."""


@contextlib.asynccontextmanager
async def served(request: pytest.FixtureRequest, engine: str,
                 directory: Path) -> AsyncIterator[tuple[LiveDocbase, Database]]:
    """A fresh database of ``engine`` served over HTTPS: the server and the database."""
    async with BACKENDS[engine](request) as stores:
        database = Database(*stores, name="main")
        async with live_docbase({"main": database}, directory) as live:
            yield live, database


@contextlib.asynccontextmanager
async def remote_database(request: pytest.FixtureRequest, backend: str,
                          directory: Path) -> AsyncIterator[Any]:
    """The client on a fresh database of ``backend`` (``remote-sqlite``/``-postgresql``)."""
    engine = "sqlite-file" if backend == "remote-sqlite" else "postgresql"
    async with (served(request, engine, directory) as (live, _),
                await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                                      verify=live.certfile) as remote):
        yield remote


class ServedPair:
    """A served database as a test of the embedded API sees it: its collections through
    the remote client (over HTTPS), everything else (schemas, settings, the raw store:
    a test's setup and inspection) on the served ``Database`` itself."""

    def __init__(self, remote: Any, embedded: Database) -> None:
        self.remote = remote
        self.embedded = embedded

    def collection(self, name: str) -> Any:
        return self.remote.collection(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedded, name)


@contextlib.asynccontextmanager
async def served_pair(database: Database, directory: Path) -> AsyncIterator[ServedPair]:
    """``database`` (open) served over HTTPS, and the client on it, as one :class:`ServedPair`."""
    async with (live_docbase({"main": database}, directory) as live,
                await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                                      verify=live.certfile) as remote):
        yield ServedPair(remote, database)
