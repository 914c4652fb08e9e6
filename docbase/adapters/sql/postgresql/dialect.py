"""PostgreSQL's answers to :class:`~docbase.adapters.sql.dialects.Dialect`: ``json``, ``jsonb``.

The document is stored twice: ``body json`` keeps the text (key order, number
spelling) and is what reads return; ``doc jsonb``, generated from it, serves fast
scalar conditions. Walking paths and order keys are the functions of
:mod:`.functions`; ``$regex`` is translated by :mod:`.regex`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from typing_extensions import override

from docbase.adapters.sql.dialects import COLUMNS, Dialect, Row, RowKind
from docbase.adapters.sql.order_keys import RANKS, encode_key
from docbase.adapters.sql.postgresql import items, order, regex, walks
from docbase.adapters.sql.values import Condition, Expr, JsonValue, PgValue, sql_string
from docbase.core.query import JSON, Path

_FUNCTIONS = {"values": "path_values", "reached": "reached", "items": "sort_items"}


class PostgresDialect(Dialect):
    """PostgreSQL 12+: ``body json`` keeps the text, ``doc jsonb`` serves fast tests."""

    name = "postgresql"
    body_type = postgresql.JSON()
    search_type = postgresql.JSONB()
    read_options: dict[str, Any] = {"isolation_level": "AUTOCOMMIT"}
    null_key = RANKS["null"]
    nulls_follow_class = True

    @override
    def root(self, table: sa.TableClause, *, exact: bool) -> JsonValue:
        return PgValue(table.c.body, "json") if exact else PgValue(table.c.doc, "jsonb")

    @override
    def path_rows(self, value: JsonValue, path: Path, kind: RowKind,
                  name: str) -> tuple[sa.FromClause, JsonValue]:
        assert isinstance(value, PgValue)
        found = (walks.walks(path) if value.family == "jsonb" and kind != "items" else None)
        if found is not None:  # built-in jsonpath, ~100x the SQL functions' speed (.walks)
            if kind == "reached":
                found = [walk + end for walk in found for end in ("", walks.ELEMENTS)]
            rows = sa.func.jsonb_array_elements(walks.listed(value.json(), found)
                                                ).table_valued("value", name=name,
                                                               joins_implicitly=True)
            return rows, PgValue(rows.c.value, "jsonb")
        function = getattr(sa.func, f"docbase_{_FUNCTIONS[kind]}_{value.family}")
        steps = sa.literal(list(path), postgresql.ARRAY(sa.Text()))
        rows = function(value.json(), steps).table_valued("value", name=name,
                                                          joins_implicitly=True)
        return rows, PgValue(rows.c.value, value.family)

    @override
    def elements(self, value: JsonValue, name: str) -> tuple[sa.FromClause, JsonValue]:
        assert isinstance(value, PgValue)
        array = sa.case((value.is_type("array"), value.json()))
        function = getattr(sa.func, f"{value.family}_array_elements")
        rows = function(array).table_valued("value", name=name, joins_implicitly=True)
        return rows, PgValue(rows.c.value, value.family)

    @override
    def literal_key(self, value: JSON) -> Any:
        return encode_key(value)

    @override
    def sort_parts(self, fast: JsonValue, exact: JsonValue) -> list[Expr]:
        assert isinstance(fast, PgValue)
        assert isinstance(exact, PgValue)
        return order.sort_parts(fast, exact)

    @override
    def literal_parts(self, value: JSON) -> list[Any]:
        return order.literal_parts(value)

    @override
    def index_parts(self, fast: JsonValue) -> list[Expr]:
        assert isinstance(fast, PgValue)
        return order.index_parts(fast)

    @override
    def chosen_item_parts(self, value: JsonValue, path: Path, descending: bool,
                          name: str) -> list[Expr]:
        # one opaque call per part and array document (not a subquery the planner
        # would plan four times); NULL when there is no item, which ranks as null
        steps = sa.literal(list(path), postgresql.ARRAY(sa.Text()))
        chosen = PgValue(sa.func.docbase_sort_item(value.json(), steps, sa.literal(descending),
                                                   type_=postgresql.JSON), "json")
        return order.sort_parts(chosen, chosen)

    @override
    def compare(self, value: JsonValue, op: str, operand: JSON) -> Condition:
        assert isinstance(value, PgValue)
        return order.compare(value, op, operand)

    @override
    def within(self, value: JsonValue, low: JSON, high: JSON, high_op: str) -> Condition:
        # the class is one column (the rank) here: its test repeated costs nothing
        return sa.and_(self.compare(value, ">=", low), self.compare(value, high_op, high))

    @override
    def equals_any(self, value: JsonValue, operands: Sequence[JSON]) -> Condition:
        assert isinstance(value, PgValue)
        return order.equals_any(value, operands)

    @override
    def is_null(self, value: JsonValue) -> Condition:
        assert isinstance(value, PgValue)
        return order.is_null(value)

    @override
    def float_sum(self, number: Expr) -> Expr:
        return sa.func.array_agg(number)  # summed by the client: PostgreSQL has no fsum

    @override
    def float_total(self, aggregated: Any) -> float:
        return math.fsum(value for value in aggregated if value is not None)

    @override
    def regex(self, text: Expr, pattern: str, options: str) -> Condition:
        return text.op("~")(regex.translate(pattern, options))

    @override
    def text_search(self, search: Expr, needle: str, name: str) -> Condition:
        strings = sa.func.jsonb_array_elements_text(search).table_valued(
            "value", name=name, joins_implicitly=True)
        found = sa.select(sa.literal(1)).select_from(strings)
        return found.where(sa.func.strpos(strings.c.value, needle) > 0).exists()

    @override
    def fanout_index(self, value: JsonValue, path: Path) -> Expr:
        return sa.or_(*(step.is_type("array") for step in self.prefixes(value, path)))

    @override
    def fanout(self, value: JsonValue, path: Path) -> Condition:
        return self.fanout_index(value, path)

    @override
    def items_statements(self, conn: sa.Connection, table: sa.TableClause, path: Path,
                         index: int) -> list[str]:
        return items.create_statements(table, path, index)

    @override
    def drop_items_statements(self, table: str) -> list[str]:
        return items.drop_statements(table)

    @override
    def items_match(self, table: sa.TableClause, path: Path, index: int,
                    operands: Sequence[JSON], exact: Condition) -> Condition:
        return items.match(table, path, index, operands, exact)

    @override
    def key_is_null(self, key: Expr) -> Condition:
        return key == sql_string(RANKS["null"])

    @override
    def order(self, key: Expr) -> Expr:
        return key.collate("C")

    @override
    def json_text(self, value: JsonValue) -> Expr:
        return sa.cast(value.json(), sa.Text)

    @override
    def body_text(self, body: Expr) -> Expr:
        return sa.cast(body, sa.Text)

    @override
    def unique_key(self, value: JsonValue) -> Expr:
        return sa.func.nullif(self.order(value.key()), sql_string(RANKS["null"]))

    @override
    def json_param(self, name: str) -> Expr:
        return sa.cast(sa.bindparam(name, type_=sa.Text), postgresql.JSON)

    @override
    def search_param(self, name: str) -> Expr:
        return sa.cast(sa.bindparam(name, type_=sa.Text), postgresql.JSONB)

    @override
    def insert(self, conn: sa.Connection, table: sa.TableClause, rows: Sequence[Row]) -> None:
        conn.execute(self._insert_rows(table, rows))

    @staticmethod
    def _insert_rows(table: sa.TableClause, rows: Sequence[Row]) -> sa.Insert:
        # one array per column, unnested: far fewer parameters than one row each
        types = (sa.Text, sa.Text, sa.Text, sa.BigInteger, sa.Text, sa.Text, sa.Text)
        columns = zip(COLUMNS, zip(*rows, strict=True), types, strict=True)
        arrays: list[Expr] = [
            sa.bindparam(f"{name}s", list(values), type_=postgresql.ARRAY(kind))
            for name, values, kind in columns
        ]
        source = sa.func.unnest(*arrays).table_valued(*COLUMNS).render_derived()
        fields: list[Expr] = [source.c[name] for name in COLUMNS]
        fields[1] = sa.cast(fields[1], postgresql.JSON)
        fields[6] = sa.cast(fields[6], postgresql.JSONB)
        return sa.insert(table).from_select(COLUMNS, sa.select(*fields))
