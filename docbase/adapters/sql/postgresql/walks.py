"""A path walked through arrays by PostgreSQL's built-in jsonpath, where it can be exact.

docbase walks a path the way ``docbase.core.evaluate.reached_values`` does: at each step
an object's member, or (a step that is no index) the members of an array's objects; the
values reached, and an array's elements besides. :mod:`.functions` writes that walk as
recursive SQL functions (``docbase_path_values_jsonb``, ``docbase_reached_jsonb``),
which PostgreSQL can neither inline nor run other than as a subplan per row: ~320 µs a
document, so a scan of 100,000 documents for an element of an array took 32 s (far
past ``limits.query_timeout``).

For a path of up to :data:`STRICT_STEPS` steps none of which may index an array, the
same values are listed by ``strict`` jsonpaths, one per way through the path, each step
behind a type filter so that no structural error arises (``silent`` would end the whole
walk on one): ~3 µs a document. :func:`walks` lists them; :mod:`.dialect` joins their
answers (``jsonb_path_query_array(...) || ...``) and reads them as rows, and the item
indexes (:mod:`.items`) index their scalars. Longer paths, and paths with an index
step, keep the SQL functions.
"""

from __future__ import annotations

import re

import msgspec
import sqlalchemy as sa

from docbase.adapters.sql.values import Expr, sql_string
from docbase.core.query import Path

STRICT_STEPS = 3
"""The most steps walked by jsonpath: up to 2**3 ways through a path."""

ELEMENTS = ' ? (@.type() == "array")[*]'
"""Appended to a walk: the elements of the value reached, when it is an array."""

_encode = msgspec.json.Encoder().encode
_INDEX_STEP = re.compile(r"0|[1-9][0-9]{0,8}")


def member(step: str) -> str:
    """The jsonpath accessor of member ``step``."""
    return "." + _encode(step).decode()


def has_index_step(path: Path) -> bool:
    """Whether a step of ``path`` may index an array (``0``, ``12``)."""
    return any(_INDEX_STEP.fullmatch(step) for step in path)


def walks(path: Path, start: str = "strict $") -> list[str] | None:
    """The strict jsonpaths reaching exactly the values at ``path`` from ``start``, or none.

    ``None`` for a path longer than :data:`STRICT_STEPS` or with an index step.
    """
    if len(path) > STRICT_STEPS or has_index_step(path):
        return None
    found = [start]
    for step in path:  # an object's member, or the members of an array's objects
        way = f' ? (@.type() == "object" && exists(@{member(step)})){member(step)}'
        found = [walk + end for walk in found for end in (way, ELEMENTS + way)]
    return found


def listed(value: Expr, jsonpaths: list[str]) -> Expr:
    """One ``jsonb`` array of every value ``jsonpaths`` reach in ``value``, in turn.

    The jsonpaths are written into the statement, never bound: a prepared statement's
    generic plan then needs no value for them.
    """
    joined: Expr | None = None
    for jsonpath in jsonpaths:
        found: Expr = sa.func.jsonb_path_query_array(
            value, sa.literal_column(sql_string(jsonpath).name + "::jsonpath"),
            sa.literal_column("'{}'::jsonb"), sa.true())
        joined = found if joined is None else joined.op("||")(found)
    assert joined is not None
    return joined
