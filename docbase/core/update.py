"""PUT and PATCH semantics: an update AST, its parser, and the reference ``apply``.

A PUT body merges its plain top-level fields and may carry the operators ``$set``,
``$unset``, ``$inc``, ``$push`` and ``$pull``; a PATCH body sets only the given
properties. In both, a dotted key is a path (``{"a.b": 1}`` sets ``b`` inside ``a``),
as MongoDB, and so the original service, reads it. System fields in a body are
ignored, never errors.
SQL adapters run :func:`apply_update` inside a transaction under a row lock; the Mongo
adapter compiles the same AST to native operators.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from typing import Any, Literal, TypeAlias

import msgspec

from docbase.core.documents import SYSTEM_FIELDS, json_copy
from docbase.core.errors import Conflict, InvalidQuery
from docbase.core.evaluate import array_index, json_equal
from docbase.core.query import JSON, Path, split_path


class SetOp(msgspec.Struct, frozen=True, tag="set"):
    """Set ``path`` to ``value``, creating missing objects on the way."""

    path: Path
    value: JSON


class UnsetOp(msgspec.Struct, frozen=True, tag="unset"):
    """Remove ``path``; a missing path is left alone."""

    path: Path


class IncOp(msgspec.Struct, frozen=True, tag="inc"):
    """Add ``amount`` to the number at ``path`` (missing becomes ``amount``)."""

    path: Path
    amount: int | float


class PushOp(msgspec.Struct, frozen=True, tag="push"):
    """Append ``value`` to the array at ``path`` (missing becomes ``[value]``)."""

    path: Path
    value: JSON


class PullOp(msgspec.Struct, frozen=True, tag="pull"):
    """Remove every element equal to ``value`` from the array at ``path``."""

    path: Path
    value: JSON


UpdateOp: TypeAlias = SetOp | UnsetOp | IncOp | PushOp | PullOp


class Update(msgspec.Struct, frozen=True):
    """An ordered list of operations; no two touch the same or an enclosing path."""

    ops: tuple[UpdateOp, ...]


_OPERATORS = ("$set", "$unset", "$inc", "$push", "$pull")


def parse_update(body: JSON, mode: Literal["put", "patch"] = "put") -> Update:
    """Parse a PUT or PATCH body into an :class:`Update`.

    Raises:
        InvalidQuery: the body is not an object, names an unknown operator, gives
            ``$inc`` a non-number, or touches one path twice.

    """
    if not isinstance(body, dict):
        raise InvalidQuery("the update body must be a JSON object")
    ops: list[UpdateOp] = []
    for key, value in body.items():
        if key.startswith("$"):
            if mode == "patch" or key not in _OPERATORS:
                raise InvalidQuery(f"unknown or unsupported update operator {key!r}")
            ops.extend(_operator(key, value))
        elif key not in SYSTEM_FIELDS:
            path = split_path(key)
            ops.append(SetOp(path, value))
    ops = [op for op in ops if op.path[0] not in SYSTEM_FIELDS]
    _check_disjoint(ops)
    return Update(tuple(ops))


def _operator(op: str, args: JSON) -> list[UpdateOp]:
    if not isinstance(args, dict):
        raise InvalidQuery(f"{op} needs an object of paths")
    result: list[UpdateOp] = []
    for name, value in args.items():
        path = split_path(name, op)
        match op:
            case "$set":
                result.append(SetOp(path, value))
            case "$unset":
                result.append(UnsetOp(path))
            case "$inc":
                result.append(IncOp(path, _number(value, name)))
            case "$push":
                result.append(PushOp(path, value))
            case _:
                result.append(PullOp(path, value))
    return result


def _number(value: JSON, name: str) -> int | float:
    # restdb.io's own examples send {"$inc": {"age": "1"}}; numeric strings are accepted.
    number = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value)
        with contextlib.suppress(ValueError):
            number = int(value)
    if (isinstance(number, bool) or not isinstance(number, int | float)
            or not math.isfinite(number)):  # float("nan") and float("inf") parse too
        raise InvalidQuery(f"$inc on {name!r} needs a number, not {value!r}")
    return number


def _check_disjoint(ops: list[UpdateOp]) -> None:
    paths = sorted(op.path for op in ops)
    for first, second in itertools.pairwise(paths):
        if second[: len(first)] == first:
            raise InvalidQuery(f"the update touches {'.'.join(first)!r} twice")


def apply_update(document: dict[str, Any], update: Update) -> dict[str, Any]:
    """Return a new document with ``update`` applied; ``document`` is not changed.

    Raises:
        Conflict: an operation meets a value of the wrong type (``$inc`` on a
            non-number, ``$push``/``$pull`` on a non-array, a path through a scalar).

    """
    result = json_copy(document)
    for op in update.ops:
        parent, last = _parent_for(result, op.path, create=not isinstance(op, UnsetOp | PullOp))
        if parent is None:
            continue
        where = ".".join(op.path)
        match op:
            case SetOp(value=value):
                _assign(parent, last, json_copy(value), where)
            case UnsetOp():
                _remove(parent, last)
            case IncOp(amount=amount):
                current = _read(parent, last)
                if current is _MISSING:
                    _assign(parent, last, amount, where)
                elif isinstance(current, bool) or not isinstance(current, int | float):
                    raise Conflict(f"cannot $inc {where!r}: it holds a non-number")
                else:
                    _assign(parent, last, current + amount, where)
            case PushOp(value=value):
                current = _read(parent, last)
                if current is _MISSING:
                    _assign(parent, last, [json_copy(value)], where)
                elif not isinstance(current, list):
                    raise Conflict(f"cannot $push to {where!r}: it is not an array")
                else:
                    current.append(json_copy(value))
            case PullOp(value=value):
                current = _read(parent, last)
                if current is _MISSING:
                    continue
                if not isinstance(current, list):
                    raise Conflict(f"cannot $pull from {where!r}: it is not an array")
                current[:] = [item for item in current if not json_equal(item, value)]
    return result


class _Missing:
    pass


_MISSING = _Missing()
Container: TypeAlias = dict[str, Any] | list[Any]


def _parent_for(
    document: dict[str, Any], path: Path, *, create: bool
) -> tuple[Container | None, str]:
    node: Container = document
    for step in path[:-1]:
        child = _read(node, step)
        if child is _MISSING:
            if not create:
                return None, path[-1]
            if isinstance(node, list):
                raise Conflict(f"cannot create {'.'.join(path)!r}: index {step} is out of range")
            child = node[step] = {}
        elif not isinstance(child, dict | list):
            if not create:
                return None, path[-1]
            raise Conflict(f"cannot set {'.'.join(path)!r}: {step!r} holds a scalar")
        node = child
    return node, path[-1]


def _read(node: Container, step: str) -> Any:
    if isinstance(node, dict):
        return node.get(step, _MISSING)
    index = _index(node, step)
    return _MISSING if index is None else node[index]


def _assign(node: Container, step: str, value: Any, where: str) -> None:
    if isinstance(node, dict):
        node[step] = value
    elif (index := _index(node, step)) is not None:
        node[index] = value
    else:
        raise Conflict(f"cannot set {where!r}: {step!r} is not an index of the array")


def _remove(node: Container, step: str) -> None:
    if isinstance(node, dict):
        node.pop(step, None)
    elif (index := _index(node, step)) is not None:
        node[index] = None  # MongoDB's $unset on an array element leaves null


def _index(node: list[Any], step: str) -> int | None:
    """The element ``step`` names, by the same rule as queries (``0``, ``12``; not ``01``)."""
    index = array_index(step)
    return index if index is not None and index < len(node) else None
