"""PostgreSQL's item indexes: an ordered side table of the scalars a path reaches.

An item index (:mod:`.item_indexes`) of path ``p`` on table ``c_<n>`` is rows of the
table ``c_<n>_items`` (``path``, ``key``, ``id``), key ``(path, key, id)``: for each
document and each item-indexed path (``path`` is the index's registry id), every
string, boolean and number the path reaches, as ``jsonb`` (the values the walked
branch of a condition tests, :mod:`.compiler`). They are listed by built-in
``jsonb_path_query`` calls. For a path of up to three steps none of which may index an
array (``0``, ``12``) the list is exact: one ``strict`` jsonpath per way through the path
(at each later step, an object's member or the members of an array's objects; at the
end the value or an array's elements), all guarded by type filters, so ``[["t"]]``
does not list ``"t"``. Other paths take one ``lax`` jsonpath, a superset (``lax`` also
enters nested arrays; an index step ends in ``.**``, everything below).

A row trigger per indexed path keeps the rows (``AFTER INSERT OR DELETE OR UPDATE OF
body``, one plpgsql function per collection, ``c_<n>_items_sync``, given the registry id
and the jsonpaths as arguments). Every write passes it, in its own transaction.

An equality on the path becomes ``id IN (SELECT id FROM c_<n>_items WHERE path = <i>
AND key = '"v"')`` (an ``$in``: ``key IN (...)``): a seek that returns the matches' ids
in key order, so a page of 20 in ``id`` order reads 20 of them and a count reads the
side table's index alone. (A GIN index on the same lists, the first version, answered
the ids unordered: a page collected every match first.) Strings and booleans on an
exact list need nothing more; otherwise the condition stays, as the recheck. Numbers
compare as ``numeric`` in ``jsonb`` and as ``float8`` in the condition (``1`` and
``1.0`` tie): a stored number is an integer or the shortest text of its double (bodies
are written by msgspec), as is the operand, so the two agree below 2**53, and an
operand beyond that skips the index.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from docbase.adapters.sql.item_rows import items_table, listed_in_items
from docbase.adapters.sql.postgresql.walks import (
    ELEMENTS,
    STRICT_STEPS,
    has_index_step,
    member,
    walks,
)
from docbase.adapters.sql.values import Condition, sql_string
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


def _jsonpaths(path: Path) -> list[str]:
    """The jsonpaths listing what ``path`` reaches: exactly, or a superset."""
    return _strict(path) or [_lax(path)]


def _sync_function(table: str) -> str:
    """The trigger function keeping ``table``'s side table: ``(registry id, jsonpaths...)``."""
    items = items_table(table)
    return (
        f"CREATE OR REPLACE FUNCTION {table}_items_sync() RETURNS trigger "
        "LANGUAGE plpgsql AS $sync$ BEGIN "
        "IF TG_OP <> 'INSERT' THEN "
        f"DELETE FROM {items} WHERE id = OLD.id AND path = TG_ARGV[0]::integer; END IF; "
        "IF TG_OP <> 'DELETE' THEN "
        f"INSERT INTO {items} (path, key, id) SELECT TG_ARGV[0]::integer, v, NEW.id "
        "FROM unnest(TG_ARGV[1:]) AS p, jsonb_path_query(NEW.doc, p::jsonpath, '{}', true) AS v "
        "ON CONFLICT DO NOTHING; END IF; "
        "RETURN NULL; END $sync$")


def create_statements(table: sa.TableClause, path: Path, index: int) -> list[str]:
    """The side table (if new), the trigger of ``path`` and its rows; run again, the same.

    Run again (:mod:`..schema`'s migration 4, over an index of the first version) it
    drops the GIN index of that version and lists the rows anew.
    """
    name, items = table.name, items_table(table.name)
    jsonpaths = _jsonpaths(path)
    listed_paths = ", ".join(sql_string(jsonpath).name for jsonpath in jsonpaths)
    return [
        f'DROP INDEX IF EXISTS "{name}_g{index}"',
        f"CREATE TABLE IF NOT EXISTS {items} (path integer NOT NULL, key jsonb NOT NULL, "
        f'id text COLLATE "C" NOT NULL, PRIMARY KEY (path, key, id))',
        f"CREATE INDEX IF NOT EXISTS {items}_id ON {items} (id, path)",
        _sync_function(name),
        # the trigger first: its lock waits for the writes in flight and holds off new
        # ones until this transaction ends, so the rows listed below miss none
        f"DROP TRIGGER IF EXISTS {name}_i{index} ON {name}",
        f"CREATE TRIGGER {name}_i{index} AFTER INSERT OR DELETE OR UPDATE OF body ON {name} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}_items_sync('{int(index)}', {listed_paths})",
        f"DELETE FROM {items} WHERE path = {int(index)}",
        f"INSERT INTO {items} (path, key, id) SELECT {int(index)}, v, c.id FROM {name} AS c, "
        f"unnest(ARRAY[{listed_paths}]) AS p, "
        "jsonb_path_query(c.doc, p::jsonpath, '{}', true) AS v ON CONFLICT DO NOTHING",
        f"ANALYZE {items}",
    ]


def drop_statements(table: str) -> list[str]:
    """Drop the side table and its function (the triggers went with ``table``)."""
    return [f"DROP TABLE IF EXISTS {items_table(table)}",
            f"DROP FUNCTION IF EXISTS {table}_items_sync()"]


def match(table: sa.TableClause, path: Path, index: int, operands: Sequence[JSON],
          exact: Condition) -> Condition:
    """``exact`` (the condition), served by the side table's rows of ``operands``."""
    if any(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) >= _EXACT
           for v in operands):
        return exact
    seek = listed_in_items(table, index, [
        sa.cast(sa.literal(_encode(value).decode(), sa.Text), postgresql.JSONB)
        for value in operands])
    if _strict(path) is not None and all(isinstance(v, str | bool) for v in operands):
        return seek  # the side table lists exactly the reached strings and booleans
    return sa.and_(seek, exact.is_(sa.true()))  # (no BitmapAnd of the condition's indexes)
