"""Item indexes: an equality on a path that meets arrays, served by an index of its items.

``{"tags": "t33"}`` matches a document whose ``tags`` is ``"t33"`` or an array holding
it (``QUERY-SEMANTICS.md``), and ``{"customer._id": x}`` one whose ``customer`` is an
array of objects one of which has that ``_id``. Every condition's first branch reads
the value reached through objects only (:mod:`.compiler`), which an expression index
serves; where the path meets an array in every document, as here, that branch never
matches, and the second one (the path's fanout, then each document's reached values
walked) read the whole collection. An item index lists, per document, every scalar the
path reaches, so that the equality seeks to its documents. It is the
rows of a side table ``c_<n>_items (path, key, id)`` kept by triggers, the equality an
``id IN (SELECT id FROM c_<n>_items WHERE path = <i> AND key = ?)`` (:mod:`.item_rows`),
whose ids come in key order (SQLite: :mod:`.sqlite.items`, the values listed by a
function of the adapter; PostgreSQL: :mod:`.postgresql.items`, by built-in jsonpaths).

An item index is recorded in ``docbase_indexes`` as ``{"items": [...]}`` (:class:`.Items`)
and made by :func:`ensure_items`, which ``ensure_index`` calls and the automatic
indexes ask for (:mod:`.auto_indexes`), only where some stored document's path meets
an array: a path that never does has nothing an expression index misses. The compiler
uses it for scalar ``Eq`` and ``In`` on whole documents (and so for counts); null,
objects, arrays and the other operators keep their branches. It is in the database:
other processes see it (:class:`.IndexedPaths`), it survives restarts, and it goes with
its collection (:func:`.indexes.drop_collection`).
"""

from __future__ import annotations

import sqlalchemy as sa

from docbase.adapters.sql import schema
from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.indexes import (
    Composite,
    Indexed,
    Items,
    ensure_composite,
    ensure_index,
    registry_text,
)
from docbase.core.field_name_encoding import encode_path


def ensure_indexed(conn: sa.Connection, backend: SqlBackend, collection: str,
                   index: Indexed) -> bool:
    """Create an index the automatic indexes want (names not encoded); whether it did."""
    if isinstance(index, Composite):
        return ensure_composite(conn, backend, collection, index)
    if isinstance(index, Items):
        return ensure_items(conn, backend, collection, index)
    return ensure_index(conn, backend, collection, encode_path(index), unique=False)


def ensure_items(conn: sa.Connection, backend: SqlBackend, collection: str,
                 index: Items) -> bool:
    """Create the item index unless it exists or no document's path meets an array.

    Whether it was created (names not encoded in ``index``).
    """
    dialect = backend.dialect
    number = backend.number(conn, collection)
    if number is None:
        return False
    registry = schema.indexes
    text = registry_text(index)
    if conn.execute(sa.select(registry.c.id).where(
            registry.c.collection_id == number, registry.c.path == text)).first() is not None:
        return False
    table = schema.collection_ddl(number, dialect)
    path = encode_path(index.path)
    fanout = dialect.fanout(dialect.root(table, exact=False), path)
    one: sa.ColumnClause[object] = sa.literal_column("1")
    if conn.execute(sa.select(one).select_from(table).where(fanout).limit(1)).first() is None:
        return False
    inserted = conn.execute(sa.insert(registry).values(
        collection_id=number, path=text, is_unique=False).returning(registry.c.id))
    for statement in dialect.items_statements(conn, table, path, int(inserted.scalar_one())):
        conn.exec_driver_sql(statement)
    if dialect.traits.analyze_after_index:
        conn.execute(sa.text(f'ANALYZE "{table.name}"'))
    return True
