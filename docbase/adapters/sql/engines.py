"""What the SQL adapter relies on per database, declared once: :class:`EngineTraits`.

The SQL each database spells differently is the :class:`~.dialects.Dialect`'s; the
rest of what differs (which INSERT has ``ON CONFLICT``, how a plan is asked for, whether
indexes need statistics, which columns and functions the layout has, how writers and
readers share the database) is one frozen :class:`EngineTraits` per database kind,
reached as ``dialect.traits`` and declared in each engine package (``sqlite/engine.py``,
``postgresql/engine.py``). The engine object is picked once (``backend.dialect_for``), so
nothing else asks which database it runs on, and ``tests/test_sql_engine_traits.py``
checks every declared trait against each database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


@dataclass(frozen=True)
class EngineTraits:
    """The declared capabilities of one database kind (see each field)."""

    name: str
    """SQLAlchemy's name of the database (``engine.dialect.name``)."""
    upsert: Callable[[sa.Table], Any]
    """The ``INSERT`` construct of a table that has ``on_conflict_do_update/_nothing``."""
    explain_prefix: str
    """What turns a ``SELECT`` into the request for its plan, one step per row."""
    explain_sees_stale_schema: bool
    """A connection plans with its cached schema, missing an index another one just made
    until it reads a table (SQLite); ``explain`` reads one first."""
    analyze_after_index: bool
    """An expression index has no statistics until ``ANALYZE`` (PostgreSQL)."""
    orders_after_equality: bool
    """The planner sees that an index ordered by an equality's parts then the sort serves
    the sort only when the ORDER BY starts with those parts (PostgreSQL: its ``number IS
    NULL`` is no equality to it); SQLite then sorts instead, and needs them left out."""
    id_collation: str | None
    """The collation of the ``id`` column that orders ids by code point (``None``: the
    column's default already does)."""
    generated_jsonb: bool
    """Collection tables have the ``doc jsonb`` column generated from ``body``."""
    server_functions: bool
    """docbase's SQL functions live in the database, installed by the migrations
    (PostgreSQL, ``postgresql/functions.py``), rather than on each connection (SQLite)."""
    migration_lock: str | None
    """The statement that serialises concurrent migrations inside their transaction
    (``None``: the write transaction alone does, SQLite's ``BEGIN IMMEDIATE``)."""
    notifies_changes: bool
    """Processes sharing the database can wake each other (``LISTEN/NOTIFY``, :mod:`.notify`)."""
    supports_row_locks: bool
    """``SELECT ... FOR UPDATE`` locks the rows read."""
    unique_index_serves_queries: bool
    """The unique index of a path is the very index that queries on it use."""
    one_writer: bool
    """One write transaction at a time holds the whole database (SQLite): a file's writes
    commit in groups by one writer thread (:mod:`.group_commit`)."""
    rows_on_driver: bool
    """Reads fetch rows on the driver's connection past SQLAlchemy (:mod:`.driver_rows`)."""
    updates_on_driver: bool
    """An update of one document is one write of the writer that reads and writes its
    row in plain SQL on the driver's connection (``?`` parameters, :mod:`.driver_updates`);
    PostgreSQL's compares and swaps on asyncpg (``postgresql/inserts.py``)."""
