"""Projection: the reference meaning of ``$fields``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeAlias

from docbase.core.documents import Document, json_copy
from docbase.core.ordering import MISSING
from docbase.core.query import JSON, Path, Projection

ID_ONLY = Projection((("_id",),), True)
"""The projection of a query that only needs the ids."""

_Tree: TypeAlias = "dict[str, _Tree | None]"  # None: keep the whole value


def project(document: Document, projection: Projection | None) -> Document:
    """Return a new document shaped by ``projection``; nothing is shared with the input.

    Including keeps ``_id`` and the listed paths in stored key order; a dot path keeps
    the nested structure, and through an array keeps the sub-field of each object
    element (an object without it stays as ``{}``, scalar elements are dropped).
    Excluding removes the listed paths, inside every object element of arrays met on
    the way (``_id`` too when listed). A numeric step is a key, never an array index.
    """
    if projection is None:
        return json_copy(document)
    if projection.include:
        tree = _tree(projection.paths)
        tree["_id"] = None
        picked: Document = _pick(document, tree)
        return picked
    result = json_copy(document)
    for path in projection.paths:
        _drop(result, path)
    return result


def _tree(paths: Iterable[Path]) -> _Tree:
    root: _Tree = {}
    for path in (path for path in paths if path):
        node = root
        for step in path[:-1]:
            child = node.setdefault(step, {})
            if child is None:  # an enclosing path is kept whole already
                break
            node = child
        else:
            node[path[-1]] = None
    return root


def _pick(value: JSON, tree: _Tree) -> Any:
    if isinstance(value, dict):
        picked: dict[str, JSON] = {}
        for key, item in value.items():
            if key not in tree:
                continue
            subtree = tree[key]
            kept = json_copy(item) if subtree is None else _pick(item, subtree)
            if kept is not MISSING:
                picked[key] = kept
        return picked
    if isinstance(value, list):
        return [kept for kept in (_pick(item, tree) for item in value) if kept is not MISSING]
    return MISSING


def _drop(value: JSON, path: Path) -> None:
    if isinstance(value, dict):
        if len(path) == 1:
            value.pop(path[0], None)
        elif path and path[0] in value:
            _drop(value[path[0]], path[1:])
    elif isinstance(value, list):
        for item in value:
            _drop(item, path)
