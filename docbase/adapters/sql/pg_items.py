"""PostgreSQL's item indexes: a GIN index on the scalars a path reaches through arrays.

An item index (:mod:`.item_indexes`) of path ``p`` on table ``c_<n>`` is a GIN index
(``jsonb_path_ops``) on ``jsonb_path_query_array(doc, 'lax $."p"[*] ? (<scalar>)')``:
a built-in, immutable expression listing every string, boolean and number the path
reaches, the values the walked branch of a condition tests (:mod:`.compiler`). In
``lax`` mode a member step applied to an array applies to its elements, as a path
step of ``docbase/core/evaluate.py`` does, and ``[*]`` lists an array's elements (a
scalar stands for itself); a step that may index an array (``0``, ``12``) ends the
path in ``.**``, every value below. The list holds at least every reached scalar
(more is harmless): an equality on the path adds
``<the expression> @> '[v]'`` (one per value of an ``$in``, ORed), which the planner
answers from the index, to the condition, which stays, as the recheck.

Numbers: the index compares them as ``numeric``, the condition as ``float8`` (so
``1`` and ``1.0`` tie). A stored number is the shortest text of its double or an
integer (bodies are written by msgspec), as is the operand, so both agree below 2**53;
an operand beyond that is left to the condition alone (an integer there may equal a
double it is not written as). The expression is written into the statement (path and
all), never bound, so that the planner sees the index's own expression.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from docbase.adapters.sql.values import Condition, Expr, sql_string
from docbase.core.query import JSON, Path

_encode = msgspec.json.Encoder().encode
_SCALAR = '@.type() == "string" || @.type() == "boolean" || @.type() == "number"'
_INDEX_STEP = re.compile(r"0|[1-9][0-9]{0,8}")
_EXACT = 2**53  # numbers below this are equal as numeric exactly when as float8


def _jsonpath(path: Path) -> str:
    steps = ["lax $"]
    for step in path:
        if _INDEX_STEP.fullmatch(step):  # an array's element too: everything below
            steps.append(".**")
            break
        steps.append("." + _encode(step).decode())
    else:
        steps.append("[*]")
    return "".join(steps) + f" ? ({_SCALAR})"


def items(doc: Expr, path: Path) -> Expr:
    """The index's expression: at least every scalar ``path`` reaches in ``doc``."""
    listed: Expr = sa.func.jsonb_path_query_array(
        doc, sa.literal_column(sql_string(_jsonpath(path)).name + "::jsonpath"),
        sa.literal_column("'{}'::jsonb"), sa.true())
    return listed


def create_statements(conn: sa.Connection, table: sa.TableClause, path: Path,
                      index: int) -> list[str]:
    """The GIN index of ``path`` (``conn`` renders its expression)."""
    expression = items(table.c.doc, path).compile(
        dialect=conn.dialect, compile_kwargs={"literal_binds": True})
    return [f'CREATE INDEX "{table.name}_g{index}" ON {table.name} '
            f"USING gin (({expression}) jsonb_path_ops)"]


def match(table: sa.TableClause, path: Path, operands: Sequence[JSON],
          exact: Condition) -> Condition:
    """``exact`` (the condition), behind the index's containment test for ``operands``."""
    if any(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) >= _EXACT
           for v in operands):
        return exact
    listed = items(table.c.doc, path)
    found = sa.or_(*(listed.op("@>")(sa.cast(sa.literal(_encode([value]).decode(), sa.Text),
                                             postgresql.JSONB)) for value in operands))
    return sa.and_(found, exact.is_(sa.true()))  # (the index alone: no BitmapAnd of it)
