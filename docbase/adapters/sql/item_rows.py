"""The side table of an item index, as both SQL engines lay it out (:mod:`.item_indexes`).

Each engine fills ``c_<n>_items (path, key, id)`` its own way (:mod:`.sqlite.items`,
:mod:`.postgresql.items`) and encodes its keys its own way; the table's name and the
seek into its key ``(path, key, id)`` are the same on both, and live here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from docbase.adapters.sql.values import Condition


def items_table(table: str) -> str:
    """The side table of collection table ``table``."""
    return f"{table}_items"


def listed_in_items(table: sa.TableClause, index: int,
                    keys: Sequence[sa.ColumnElement[Any]]) -> Condition:
    """The documents of ``table`` whose item index ``index`` lists one of ``keys``.

    One seek of the side table's key per key; its ids come in ``id`` order per key.
    """
    items = sa.table(items_table(table.name), sa.column("path"), sa.column("key"),
                     sa.column("id"))
    found = sa.select(items.c.id).where(
        items.c.path == sa.literal_column(str(int(index))),
        items.c.key == keys[0] if len(keys) == 1 else items.c.key.in_(keys))
    return table.c.id.in_(found)
