"""PostgreSQL's item indexes: a GIN index on the scalars a path reaches through arrays.

An item index (:mod:`.item_indexes`) of path ``p`` on table ``c_<n>`` is a GIN index
``c_<n>_g<i>`` (``jsonb_path_ops``) on built-in, immutable ``jsonb_path_query_array``
calls listing the strings, booleans and numbers the path reaches: the values the
walked branch of a condition tests (:mod:`.compiler`). For a path of up to three steps
none of which may index an array (``0``, ``12``) they are exact: one ``strict``
jsonpath per way through the path (at each later step, an object's member or the
members of an array's objects; at the end the value or an array's elements), all
guarded by type filters, so ``[["t"]]`` does not list ``"t"``. Other paths take one
``lax`` jsonpath, a superset (``lax`` also enters nested arrays; an index step ends in
``.**``, everything below).

An equality on the path becomes ``id = ANY(ARRAY(SELECT id ... WHERE <list> @>
'["v"]'))`` (an ``$in``: the containments ORed): the matches' ids from a bitmap scan of
the index, then their rows by key. Strings and booleans on an exact list need nothing
more; otherwise the condition stays, as the recheck. Numbers compare as ``numeric`` in
the list and as ``float8`` in the condition (``1`` and ``1.0`` tie): a stored number
is an integer or the shortest text of its double (bodies are written by msgspec), as
is the operand, so the two agree below 2**53, and an operand beyond that skips the
index. The expression is written into the statement, never bound, so that the planner
sees the index's own expression.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from docbase.adapters.sql.postgresql.walks import (
    ELEMENTS,
    STRICT_STEPS,
    has_index_step,
    listed,
    member,
    walks,
)
from docbase.adapters.sql.values import Condition, Expr
from docbase.core.query import JSON, Path

_encode = msgspec.json.Encoder().encode
_SCALAR = '@.type() == "string" || @.type() == "boolean" || @.type() == "number"'
_EXACT = 2**53  # numbers below this are equal as numeric exactly when as float8


def _strict(path: Path) -> list[str] | None:
    """The strict jsonpaths listing exactly the scalars ``path`` reaches, or none."""
    if len(path) > STRICT_STEPS or has_index_step(path[:1]):
        return None
    found = walks(path[1:], "strict $" + member(path[0]))  # (a document is an object)
    return None if found is None else [  # the value, or an array's elements
        walk + end for walk in found for end in (f" ? ({_SCALAR})", f"{ELEMENTS} ? ({_SCALAR})")]


def _lax(path: Path) -> str:
    steps = ["lax $"]
    for step in path:
        if has_index_step((step,)):  # an array's element too: everything below
            steps.append(".**")
            break
        steps.append(member(step))
    else:
        steps.append("[*]")
    return "".join(steps) + f" ? ({_SCALAR})"


def items(doc: Expr, path: Path) -> Expr:
    """The index's expression: every scalar ``path`` reaches in ``doc`` (or more)."""
    return listed(doc, _strict(path) or [_lax(path)])


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
    inner = table.alias("items_of")
    listed = items(inner.c.doc, path)
    found = sa.or_(*(listed.op("@>")(sa.cast(sa.literal(_encode([value]).decode(), sa.Text),
                                             postgresql.JSONB)) for value in operands))
    # the matches' ids first (a bitmap scan of the GIN index), then their rows by key:
    # as one condition the planner walked the key index in order testing each row,
    # which reads the whole table when the matches are few or late
    ids: Expr = sa.func.array(sa.select(inner.c.id).where(found).scalar_subquery())
    seek = table.c.id == sa.any_(ids)
    if _strict(path) is not None and all(isinstance(v, str | bool) for v in operands):
        return seek  # the index lists exactly the reached strings and booleans
    return sa.and_(seek, exact.is_(sa.true()))  # (no BitmapAnd of the condition's indexes)
