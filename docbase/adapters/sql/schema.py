"""The storage layout the adapter owns, and its versioned forward migrations.

- ``docbase_layout``: one row, the layout version; :func:`migrate` runs at ``open()``
  and applies every missing step in order, under a lock (PostgreSQL advisory lock,
  SQLite write transaction) so that concurrent openers migrate once.
- ``docbase_collections``: collection name -> number; collection ``n`` lives in table
  ``c_<n>``. Names never reach SQL text, and numbers are never reused, so a stale
  name cache can fail but never read another collection.
- ``docbase_indexes``: the indexed paths of each collection (as JSON arrays).
- ``c_<n>``: ``id`` (``_id``), ``body`` (the whole document as JSON text; ``json`` on
  PostgreSQL, plus ``doc jsonb`` generated from it for fast conditions), ``parent_id``,
  ``version``, ``created``, ``changed`` and ``search`` (the lower-cased strings that
  ``filter=text`` searches).
- ``docbase_blobs`` / ``docbase_blob_chunks``: blob metadata and fixed-size chunks;
  ``docbase_blobs.blob_id`` is indexed (migration 2) so the orphan sweep finds chunks no
  blob points to without scanning every blob per chunk.
- migration 3 rebuilds PostgreSQL's key indexes on the native order parts and
  reinstalls its functions (``postgresql/functions.py``).
- migration 4 rebuilds PostgreSQL's item indexes as ordered side tables
  (``postgresql/items.py``) in place of their first version's GIN indexes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.sql.elements import Grouping

from docbase.adapters.sql.dialects import Dialect
from docbase.core.errors import ConfigurationError
from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql
else:  # imported for PostgreSQL tables only (~2 MiB per process)
    postgresql = lazy_module("sqlalchemy.dialects.postgresql")

LAYOUT_VERSION = 4

metadata = sa.MetaData()

layout = sa.Table("docbase_layout", metadata, sa.Column("version", sa.Integer, nullable=False))

collections = sa.Table(
    "docbase_collections", metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sqlite_autoincrement=True,
)

indexes = sa.Table(
    "docbase_indexes", metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("collection_id", sa.Integer, nullable=False),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("is_unique", sa.Boolean, nullable=False),
    sa.UniqueConstraint("collection_id", "path"),
    sqlite_autoincrement=True,
)

blobs = sa.Table(
    "docbase_blobs", metadata,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("blob_id", sa.Text, nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("content_type", sa.Text, nullable=False),
    sa.Column("chunk_size", sa.Integer, nullable=False),
)
blobs_by_id = sa.Index("docbase_blobs_blob_id", blobs.c.blob_id)

blob_chunks = sa.Table(
    "docbase_blob_chunks", metadata,
    sa.Column("blob_id", sa.Text, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


def table_name(number: int) -> str:
    """Return the table name of collection ``number``."""
    return f"c_{number}"


def collection_table(number: int, dialect: Dialect) -> sa.TableClause:
    """Describe the collection table for queries (``body`` as JSON text)."""
    return sa.table(
        table_name(number),
        sa.column("id", sa.Text), sa.column("body", sa.Text), sa.column("doc"),
        sa.column("parent_id", sa.Text), sa.column("version", sa.Integer),
        sa.column("created", sa.Text), sa.column("changed", sa.Text),
        sa.column("search", dialect.search_type),
    )


@functools.cache
def lookup_sql(number: int, body: str, placeholder: str) -> str:
    """Return the SQL text reading ``body`` of collection ``number``'s row by ``id``."""
    return f"SELECT {body} FROM {table_name(number)} WHERE id = {placeholder}"


@functools.cache
def number_sql(placeholder: str) -> str:
    """Return the SQL text reading a collection's table number by its name.

    For readers that bypass SQLAlchemy (:mod:`.loop_reads`); the backend asks with a
    select on :data:`collections`, and both name their columns from that one table.
    """
    registry = collections
    return (f"SELECT {registry.c.id.name} FROM {registry.name} "
            f"WHERE {registry.c.name.name} = {placeholder}")


def collection_ddl(number: int, dialect: Dialect) -> sa.Table:
    """Describe the collection table as DDL, also the anchor of its indexes."""
    name = table_name(number)
    traits = dialect.traits
    columns = [
        sa.Column("id", sa.Text(collation=traits.id_collation), primary_key=True),
        sa.Column("body", dialect.body_type, nullable=False),
        sa.Column("parent_id", sa.Text),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("created", sa.Text),
        sa.Column("changed", sa.Text),
        sa.Column("search", dialect.search_type, nullable=False),
    ]
    if traits.generated_jsonb:
        columns.insert(2, sa.Column("doc", postgresql.JSONB,
                                    sa.Computed("body::jsonb", persisted=True)))
    table = sa.Table(name, sa.MetaData(), *columns)
    sa.Index(f"{name}_parent", table.c.parent_id)
    return table


def _v1(conn: sa.Connection, dialect: Dialect) -> None:
    metadata.create_all(conn, checkfirst=True)
    for statement in dialect.function_statements():  # PostgreSQL's; SQLite's are per connection
        conn.exec_driver_sql(statement)


def _v2(conn: sa.Connection, dialect: Dialect) -> None:
    blobs_by_id.create(conn, checkfirst=True)


def _v3(conn: sa.Connection, dialect: Dialect) -> None:
    # PostgreSQL's key indexes hold the native order parts (postgresql/order.py), which queries
    # now compare, instead of docbase_scalar_key's text (SQLite's did not change)
    if not dialect.traits.server_functions:
        return
    for statement in dialect.function_statements():  # STRICT, docbase_sort_item
        conn.exec_driver_sql(statement)
    for row in conn.execute(sa.select(indexes.c.id, indexes.c.collection_id, indexes.c.path)):
        table = collection_ddl(row.collection_id, dialect)
        name = f"{table.name}_k{row.id}"
        conn.execute(sa.text(f'DROP INDEX IF EXISTS "{name}"'))
        value = dialect.root(table, exact=False).walk(tuple(json.loads(row.path)))
        parts = (Grouping(part) for part in dialect.index_parts(value))
        sa.Index(name, *parts, _table=table).create(conn)


def _v4(conn: sa.Connection, dialect: Dialect) -> None:
    # PostgreSQL's item indexes were GIN indexes, unordered: a page collected every match
    # (SQLite's side tables did not change); its statements, run again, replace them
    if not dialect.traits.server_functions:
        return
    for row in conn.execute(sa.select(indexes.c.id, indexes.c.collection_id, indexes.c.path)):
        listed = json.loads(row.path)
        if isinstance(listed, dict) and "items" in listed:
            table = collection_ddl(row.collection_id, dialect)
            for statement in dialect.items_statements(conn, table, tuple(listed["items"]),
                                                      int(row.id)):
                conn.exec_driver_sql(statement)


MIGRATIONS: dict[int, Callable[[sa.Connection, Dialect], None]] = {
    1: _v1, 2: _v2, 3: _v3, 4: _v4}


def migrate(conn: sa.Connection, dialect: Dialect) -> int:
    """Bring the layout to :data:`LAYOUT_VERSION`; return the version found.

    Raises:
        ConfigurationError: the database was written by a newer docbase.

    """
    if dialect.traits.migration_lock is not None:
        conn.execute(sa.text(dialect.traits.migration_lock))
    layout.create(conn, checkfirst=True)
    found = conn.execute(sa.select(sa.func.max(layout.c.version))).scalar() or 0
    if found > LAYOUT_VERSION:
        raise ConfigurationError(
            f"the database layout is version {found}, newer than this docbase "
            f"understands ({LAYOUT_VERSION}); upgrade docbase")
    for version in range(found + 1, LAYOUT_VERSION + 1):
        MIGRATIONS[version](conn, dialect)
    if found < LAYOUT_VERSION:
        conn.execute(sa.delete(layout))
        conn.execute(sa.insert(layout).values(version=LAYOUT_VERSION))
    return int(found)
