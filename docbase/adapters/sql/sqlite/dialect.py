"""SQLite's answers to :class:`~docbase.adapters.sql.dialects.Dialect`: JSON1 plus Python.

Walking a path through arrays, order keys of objects and arrays and ``$regex`` are the
Python functions of :mod:`.functions`, registered on every connection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from typing_extensions import override

from docbase.adapters.sql.dialects import COLUMNS, Dialect, Row, RowKind
from docbase.adapters.sql.order_keys import encode_key
from docbase.adapters.sql.sqlite import items
from docbase.adapters.sql.values import (
    Condition,
    Expr,
    JsonValue,
    SqliteItem,
    SqlitePath,
)
from docbase.core.ordering import TypeClass, type_class
from docbase.core.query import JSON, Path

_encode = msgspec.json.Encoder().encode


class SqliteDialect(Dialect):
    """SQLite 3.38+ with the JSON functions and docbase's functions (:mod:`.functions`)."""

    name = "sqlite"
    body_type = sa.Text()
    search_type = sa.Text()
    read_options: dict[str, Any] = {"docbase_read": True}
    null_key = None
    _FUNCTIONS = {"values": "docbase_path_values", "reached": "docbase_reached",
                  "items": "docbase_sort_items"}

    def __init__(self) -> None:
        self._inserts: dict[str, str] = {}

    @override
    def root(self, table: sa.TableClause, *, exact: bool) -> JsonValue:
        return SqlitePath(table.c.body)

    @override
    def path_rows(self, value: JsonValue, path: Path, kind: RowKind,
                  name: str) -> tuple[sa.FromClause, JsonValue]:
        walked = getattr(sa.func, self._FUNCTIONS[kind])(value.json(), _encode(list(path)).decode())
        rows = sa.func.json_each(walked).table_valued("value", "type", name=name,
                                                      joins_implicitly=True)
        return rows, SqliteItem(rows.c.value, rows.c.type)

    @override
    def elements(self, value: JsonValue, name: str) -> tuple[sa.FromClause, JsonValue]:
        array = sa.case((value.is_type("array"), value.json()))
        rows = sa.func.json_each(array).table_valued("value", "type", name=name,
                                                     joins_implicitly=True)
        return rows, SqliteItem(rows.c.value, rows.c.type)

    @override
    def literal_key(self, value: JSON) -> Any:
        kind = type_class(value)
        if kind == "number":
            return value if isinstance(value, float) or abs(value) < 2**63 else float(value)
        return value if kind == "string" else encode_key(value).encode()

    @override
    def items_statements(self, conn: sa.Connection, table: sa.TableClause, path: Path,
                         index: int) -> list[str]:
        return items.create_statements(table.name, path, index)

    @override
    def drop_items_statements(self, table: str) -> list[str]:
        return items.drop_statements(table)

    @override
    def items_match(self, table: sa.TableClause, path: Path, index: int,
                    operands: Sequence[JSON], exact: Condition) -> Condition:
        # the side table lists every reached scalar of every document: exact alone
        return items.match(table, index, [self.literal_key(v) for v in operands])

    @override
    def class_bounds(self, cls: TypeClass) -> tuple[Any, Any]:
        # SQLite orders NULL < numbers < text < blob; objects, arrays, booleans are blobs
        if cls == "number":
            return None, ""
        if cls == "string":
            return "", b""
        low, high = super().class_bounds(cls)
        return low.encode(), high.encode()

    @override
    def float_sum(self, number: Expr) -> Expr:
        return sa.func.group_concat(sa.func.docbase_float_repr(number), " ")

    @override
    def float_total(self, aggregated: Any) -> float:
        return math.fsum(float(text) for text in (aggregated or "").split())

    @override
    def regex(self, text: Expr, pattern: str, options: str) -> Condition:
        return sa.func.docbase_regexp(pattern, options, text) == 1

    @override
    def text_search(self, search: Expr, needle: str, name: str) -> Condition:
        rows = sa.func.json_each(search).table_valued("value", name=name, joins_implicitly=True)
        found = sa.select(sa.literal(1)).select_from(rows)
        return found.where(sa.func.instr(rows.c.value, needle) > 0).exists()

    @override
    def fanout_index(self, value: JsonValue, path: Path) -> Expr:
        arrays = [step.is_type("array") for step in self.prefixes(value, path)]
        return sa.case((sa.or_(*arrays), sa.literal_column("1")))

    @override
    def fanout(self, value: JsonValue, path: Path) -> Condition:
        return self.fanout_index(value, path) == sa.literal_column("1")

    @override
    def unindexed_fanout(self, value: JsonValue, path: Path) -> Condition:
        # 0 + the expression: no longer the fanout index's, which SQLite read whole (every
        # document of a path that is an array in all) testing an item index's ids on each
        return (sa.literal_column("0") + self.fanout_index(value, path)) == sa.literal_column("1")

    @override
    def key_is_null(self, key: Expr) -> Condition:
        return key.is_(None)

    @override
    def order(self, key: Expr) -> Expr:
        return key

    @override
    def json_text(self, value: JsonValue) -> Expr:
        return value.json()

    @override
    def body_text(self, body: Expr) -> Expr:
        return body

    @override
    def without_fields(self, body: Expr, fields: Sequence[str]) -> Expr | None:
        # JSON1 writes numbers and strings back as they were spelt (tests/test_sql_engine_traits.py)
        return sa.func.json_remove(body, *(f'$."{name}"' for name in fields))

    @override
    def unique_key(self, value: JsonValue) -> Expr:
        return value.key()

    @override
    def json_param(self, name: str) -> Expr:
        return sa.bindparam(name, type_=sa.Text)

    # both columns are plain text in SQLite: the body's parameter serves the search column
    search_param = json_param

    @override
    def insert(self, conn: sa.Connection, table: sa.TableClause, rows: Sequence[Row]) -> None:
        # plain SQL on the driver, prepared once per connection and run row by row in C:
        # no statement to build, compile or look up in SQLAlchemy's cache per write, and
        # none of SQLAlchemy's execution context (~20 us a statement; sqlite3 errors are
        # translated as SQLAlchemy's, .errors)
        statement = self._inserts.get(table.name)
        if statement is None:
            statement = self._inserts[table.name] = (
                f"INSERT INTO {table.name} ({', '.join(COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(COLUMNS))})")
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.executemany(statement, rows)
