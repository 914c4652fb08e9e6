"""Compile core's :class:`~docbase.core.update.Update` to native update operators.

MongoDB's operators do what ``apply_update`` does as long as every path walks through
objects (or through nothing yet: missing objects are created alike), ``$inc`` meets a
number or nothing, ``$push``/``$pull`` meet an array or nothing, and no object gains
two new keys in one update (MongoDB adds them in lexicographic order, core in the
order given). Those conditions are not known before reading the document, so they go
into the filter as an ``$expr`` *guard*: when it holds the native update is exact and
atomic; when it does not, nothing is written and the store falls back to reading the
document, applying ``apply_update`` (which raises the exact ``Conflict``) and replacing
it under a ``_version`` check.

The same update keeps the search field (:mod:`.codec`) current: a top-level ``$set``
or ``$unset`` replaces or removes the field's strings; deeper ones, and ``$push``, may
only add strings (``$addToSet``), so they are guarded not to overwrite a string, an
object or an array. ``$pull`` becomes ``$pullAll``: ``$pull`` would read an object
operand as a query.

Operators name fields by dotted paths, so an update naming a key that holds ``.`` (or
a legacy raw ``$`` key, :mod:`.keys`) is not compiled: the replace path stores it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from docbase.adapters.mongo.codec import SEARCH_FIELD, escape_name
from docbase.adapters.mongo.expressions import NUMBER_TYPES, plain_field
from docbase.core.evaluate import lowered_strings
from docbase.core.query import JSON, Path
from docbase.core.update import IncOp, PullOp, PushOp, SetOp, UnsetOp, Update

_FOLLOWABLE = ["object", "missing"]
_NUMERIC_OR_MISSING = [*NUMBER_TYPES, "missing"]
_ARRAY_OR_MISSING = ["array", "missing"]
_WITHOUT_STRINGS = [*NUMBER_TYPES, "bool", "null", "missing"]


class NativeUpdate(NamedTuple):
    """A native update document and the condition under which it equals core's."""

    document: dict[str, Any]
    guard: dict[str, Any] | None
    """An ``$expr`` expression to add to the filter, or ``None`` when always exact."""


def compile_update(update: Update, stamp: Mapping[str, Any]) -> NativeUpdate | None:
    """Compile ``update``, plus ``stamp`` and ``_version + 1``, to native operators.

    ``None`` when no guard can make it exact: a path step that is no plain field name
    (a dotted path would misread it), a ``$pull`` of a value holding objects (engines
    judge their equality differently) or strings (the search field cannot tell whether
    another copy of the string remains).
    """
    if not all(plain_field(step) for op in update.ops for step in op.path):
        return None
    sets: dict[str, Any] = {}
    unsets: dict[str, str] = {}
    incs: dict[str, Any] = {}
    pushes: dict[str, Any] = {}
    pulls: dict[str, list[JSON]] = {}
    searched: dict[str, list[str]] = {}
    guards: list[dict[str, Any]] = []
    for op in update.ops:
        dotted = ".".join(op.path)
        guards.extend(_type_in(op.path[:k], _FOLLOWABLE) for k in range(1, len(op.path)))
        search = f"{SEARCH_FIELD}.{escape_name(op.path[0])}"
        match op:
            case SetOp(value=value):
                sets[dotted] = value
                if len(op.path) == 1:  # the field's strings are exactly the new value's
                    strings = lowered_strings(value)
                    if strings:
                        sets[search] = strings
                    else:
                        unsets[search] = ""
                else:  # strings may be added, never removed
                    guards.append(_type_in(op.path, _WITHOUT_STRINGS))
                    searched.setdefault(search, []).extend(lowered_strings(value))
            case UnsetOp():
                unsets[dotted] = ""
                if len(op.path) == 1:
                    unsets[search] = ""
                else:
                    guards.append(_type_in(op.path, _WITHOUT_STRINGS))
            case IncOp(amount=amount):
                incs[dotted] = amount
                guards.append(_type_in(op.path, _NUMERIC_OR_MISSING))
            case PushOp(value=value):
                pushes[dotted] = value
                guards.append(_type_in(op.path, _ARRAY_OR_MISSING))
                searched.setdefault(search, []).extend(lowered_strings(value))
            case PullOp(value=value):
                if _holds_object(value) or lowered_strings(value):
                    return None
                pulls[dotted] = [value]
                guards.append(_type_in(op.path, _ARRAY_OR_MISSING))
    guards.extend(_new_keys_in_order(update))
    sets.update(stamp)
    incs["_version"] = 1
    added = {key: {"$each": strings} for key, strings in searched.items() if strings}
    operators = {"$set": sets, "$unset": unsets, "$inc": incs, "$push": pushes,
                 "$pullAll": pulls, "$addToSet": added}
    document = {name: fields for name, fields in operators.items() if fields}
    guard = None if not guards else guards[0] if len(guards) == 1 else {"$and": guards}
    return NativeUpdate(document, guard)


def _field(path: Path) -> str:
    return "$" + ".".join(path)


def _type_in(path: Path, types: list[str]) -> dict[str, Any]:
    return {"$in": [{"$type": _field(path)}, types]}


def _holds_object(value: JSON) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(_holds_object(item) for item in value)


def _new_keys_in_order(update: Update) -> list[dict[str, Any]]:
    """Guards that no object gains two keys in one update (their order would differ)."""
    created: dict[Path, dict[str, None]] = {}
    for op in update.ops:
        if isinstance(op, UnsetOp | PullOp):
            continue
        for k in range(len(op.path)):
            created.setdefault(op.path[:k], {})[op.path[k]] = None
    guards = []
    for parent, keys in created.items():
        if len(keys) > 1:
            missing = [{"$cond": [{"$eq": [{"$type": _field((*parent, key))}, "missing"]}, 1, 0]}
                       for key in keys]
            guards.append({"$lte": [{"$add": missing}, 1]})
    return guards
