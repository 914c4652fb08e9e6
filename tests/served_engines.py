"""One ``docbase serve`` per storage engine, for HTTP tests that must hold on every one.

:func:`engine_storage` gives the ``--storage`` URL of a fresh, empty database on
``engine`` (memory, SQLite, PostgreSQL or the Mongo wire server), made and removed with
the backend helpers of ``tests/backends.py``, so a missing service is skipped locally and
fails under ``CI=true``. :data:`ENGINES` parametrises a fixture over the four, with the
``postgres``/``mongo`` markers their backend tests carry.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backends import mongo_server, mongo_url, postgresql_schema

ENGINES = [
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
    pytest.param("mongo", id="mongo", marks=pytest.mark.mongo),
]
"""The engines a served test runs on, as ``pytest.param``s with their markers."""


@contextlib.contextmanager
def postgresql_storage() -> Iterator[str]:
    """A fresh PostgreSQL schema's storage URL, dropped afterwards (from sync code)."""
    loop = asyncio.new_event_loop()
    manager = postgresql_schema()
    try:
        yield loop.run_until_complete(manager.__aenter__())
    finally:
        loop.run_until_complete(manager.__aexit__(None, None, None))
        loop.close()


@contextlib.contextmanager
def mongo_storage() -> Iterator[str]:
    """A fresh database on the Mongo server under test, dropped afterwards."""
    from pymongo import MongoClient

    url = mongo_url(mongo_server()[0], f"docbase_served_{uuid.uuid4().hex[:12]}")
    try:
        yield url
    finally:
        with MongoClient(url, serverSelectionTimeoutMS=10_000) as client:
            client.drop_database(url.rsplit("/", 1)[1].partition("?")[0])


@contextlib.contextmanager
def engine_storage(engine: str, data_dir: Path) -> Iterator[str]:
    """The ``--storage`` URL of a fresh database on ``engine``."""
    if engine == "memory":
        yield "memory://"
    elif engine == "sqlite":
        yield f"sqlite:///{data_dir / 'hostile.db'}"
    elif engine == "postgresql":
        with postgresql_storage() as url:
            yield url
    elif engine == "mongo":
        with mongo_storage() as url:
            yield url
    else:
        raise ValueError(f"unknown engine {engine!r}")
