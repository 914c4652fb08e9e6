"""SQLite's item indexes: a side table of the scalars a path reaches, kept by triggers.

SQLite has no multi-valued index, so an item index (:mod:`.item_indexes`) is rows of
the table ``c_<n>_items`` (``path``, ``key``, ``id``): for each document of ``c_<n>``
and each item-indexed path (``path`` is the index's registry id), the key of every
scalar the path reaches (``docbase.core.evaluate.reached_values``, the function the
walked branch of every condition lists, :mod:`.compiler`): a number or string itself,
a boolean its blob (``x'3631'``, ``x'3630'``), as in the expression indexes (``key``
has no declared type, so no affinity converts a value). Null,
objects and arrays are left out (their conditions keep their own branches).

Triggers on ``c_<n>`` keep the rows: every write (the driver's inserts and updates,
held-back inserts, deletes, ``delete_where``) passes through them, in its own
transaction. The table's key ``(path, key, id)`` makes an equality a seek that
returns ids in order; a second index on ``id`` serves the triggers' deletes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa

from docbase.adapters.sql.item_rows import items_table, listed_in_items
from docbase.adapters.sql.order_keys import FALSE_KEY, TRUE_KEY
from docbase.adapters.sql.values import Condition
from docbase.core.query import Path

_encode = msgspec.json.Encoder().encode
_SCALAR_TYPES = "('integer', 'real', 'text', 'true', 'false')"


def _rows(table: str, path: Path, index: int, row: str, source: str) -> str:
    """``SELECT`` the side table's rows of ``row`` (a row of ``source``) for one path."""
    walked = "'" + _encode(list(path)).decode().replace("'", "''") + "'"
    key = (f"CASE j.type WHEN 'true' THEN x'{TRUE_KEY.encode().hex()}' "
           f"WHEN 'false' THEN x'{FALSE_KEY.encode().hex()}' ELSE j.value END")
    return (f"SELECT {index}, {key}, {row}.id FROM {source}"
            f"json_each(docbase_reached({row}.body, {walked})) AS j "
            f"WHERE j.type IN {_SCALAR_TYPES}")


def create_statements(table: str, path: Path, index: int) -> list[str]:
    """The side table (if new), its rows for ``path`` and the triggers keeping them."""
    items = items_table(table)
    name = f"{table}_i{index}"
    insert = f"INSERT OR IGNORE INTO {items} (path, key, id) "
    return [
        f"CREATE TABLE IF NOT EXISTS {items} (path INTEGER NOT NULL, key, "
        f"id TEXT NOT NULL, PRIMARY KEY (path, key, id)) WITHOUT ROWID",
        f"CREATE INDEX IF NOT EXISTS {items}_id ON {items} (id)",
        insert + _rows(table, path, index, "c", f"{table} AS c, "),
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN "
        f"{insert}{_rows(table, path, index, 'NEW', '')}; END",
        f"CREATE TRIGGER {name}_update AFTER UPDATE OF body ON {table} BEGIN "
        f"DELETE FROM {items} WHERE id = OLD.id AND path = {index}; "
        f"{insert}{_rows(table, path, index, 'NEW', '')}; END",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN "
        f"DELETE FROM {items} WHERE id = OLD.id AND path = {index}; END",
    ]


def drop_statements(table: str) -> list[str]:
    """Drop the side table (the triggers went with ``table``)."""
    return [f"DROP TABLE IF EXISTS {items_table(table)}"]


def match(table: sa.TableClause, index: int, keys: Sequence[Any]) -> Condition:
    """The documents whose indexed path reaches one of ``keys`` (exact: no recheck)."""
    return listed_in_items(table, index, [sa.literal(key) for key in keys])
