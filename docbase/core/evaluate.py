"""The reference semantics of a query: matching, sorting, paging, projection, grouping.

This is ``QUERY-SEMANTICS.md`` in executable form. The memory adapter runs it; the SQL
and Mongo adapters compile the AST of :mod:`docbase.core.query` and are tested against
it. Where the page leaves a choice open, this module fixes it (and says so below):

- A path is *missing* when it reaches no value at all (see :func:`path_values`). So
  ``{"a.b": null}`` does not match ``{"a": [{"b": 1}, {}]}``, as ``a.b`` reaches ``1``.
- A numeric step indexes an array only when written canonically (``0``, ``12``; not
  ``01``), and the element it reaches comes before values reached through objects.
- ``$elemMatch`` with operator conditions (``objects=False``) looks at scalar elements
  only (null, number, string, boolean); with field conditions at object elements only.
- ``filter=text`` lower-cases both sides with :meth:`str.lower` and searches string
  values only (never keys, numbers or top-level system fields).
- Grouping and the aggregated fields follow objects only (:func:`group_key`).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeAlias, assert_never

from docbase.core.documents import SYSTEM_FIELDS, Document
from docbase.core.ordering import MISSING, OrderKey, compare, sort_key, type_class
from docbase.core.query import (
    JSON,
    Aggregate,
    AggregateRow,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Ne,
    Nin,
    Not,
    Or,
    Path,
    Projection,
    Query,
    Regex,
    SortKey,
    Text,
)

# ---------------------------------------------------------------------------- values


def json_equal(a: JSON, b: JSON) -> bool:
    """Deep equality of JSON values.

    Numbers compare by value (``1 == 1.0``) but a boolean never equals a number; objects
    are equal only with the same keys in the same order (as in MongoDB).
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and not isinstance(a, int | float | list | dict) and a == b


def _index(step: str) -> int | None:
    if step.isascii() and step.isdigit() and (step == "0" or not step.startswith("0")):
        return int(step)
    return None


def path_values(value: JSON, path: Path) -> list[JSON]:
    """Return the values at the end of ``path``, arrays found there not yet expanded.

    Objects are walked by key. A step that meets an array continues into every element
    that is an object holding that key (elements that are arrays are not entered), and a
    numeric step also indexes the array, that element coming first. An empty list means
    the path is *missing*; a stored null gives ``[None]``. The empty path gives
    ``[value]``.
    """
    if not path:
        return [value]
    step, rest = path[0], path[1:]
    if isinstance(value, dict):
        return path_values(value[step], rest) if step in value else []
    if not isinstance(value, list):
        return []
    found: list[JSON] = []
    index = _index(step)
    if index is not None and index < len(value):
        found.extend(path_values(value[index], rest))
    for element in value:
        if isinstance(element, dict) and step in element:
            found.extend(path_values(element[step], rest))
    return found


def reached_values(document: JSON, path: Path) -> list[JSON]:
    """Return the values a condition on ``path`` is tested against (empty when missing).

    These are the :func:`path_values` and, for each of them that is an array, its
    elements (one level): ``{"t": [1, [2]]}`` reaches ``[1, [2]]``, ``1`` and ``[2]``.
    """
    reached: list[JSON] = []
    for value in path_values(document, path):
        reached.append(value)
        if isinstance(value, list):
            reached.extend(value)
    return reached


def group_key(document: JSON, path: Path) -> JSON:
    """Return the value grouped on: the plain value at ``path``, following objects only.

    There is no array expansion: an array value is the key as a whole, and a step that
    meets anything but an object (an array, even with a numeric step, or a scalar) makes
    the path missing. Missing and null both give ``None``.
    """
    value = _plain_value(document, path)
    return None if value is MISSING else value


def _plain_value(value: JSON, path: Path) -> JSON:
    for step in path:
        if not isinstance(value, dict) or step not in value:
            return MISSING
        value = value[step]
    return value


# ---------------------------------------------------------------------------- matching


def matches(filter: Filter, document: JSON) -> bool:
    """Tell whether ``document`` satisfies ``filter``, per ``QUERY-SEMANTICS.md``.

    ``document`` is usually an object; inside ``$elemMatch`` it is an array element
    and the conditions use the empty path.
    """
    match filter:
        case Eq() | Ne() | In() | Nin():
            listed = filter.values if isinstance(filter, In | Nin) else (filter.value,)
            found = any(_equal(v, x) for v in _candidates(document, filter.path) for x in listed)
            return found == isinstance(filter, Eq | In)
        case Gt() | Gte() | Lt() | Lte():
            low, high = _RANGES[type(filter)]
            return any(_ordered(v, filter.value, low, high)
                       for v in _candidates(document, filter.path))
        case Between(path=path, low=low, high=high):
            return any(_ordered(v, low, 0, 1) and _ordered(v, high, -1, 0)
                       for v in _candidates(document, path))
        case Regex(path=path, pattern=pattern, options=options):
            regex = _compile(pattern, options)
            return any(isinstance(v, str) and regex.search(v) is not None
                       for v in reached_values(document, path))
        case Exists(path=path, present=present):
            return bool(path_values(document, path)) == present
        case ElemMatch(path=path, query=query, objects=objects):
            return any(isinstance(array, list) and any(
                _element_matches(query, element, objects=objects) for element in array)
                for array in path_values(document, path))
        case Text(text=text):
            needle = text.lower()
            return any(needle in s.lower() for s in _strings(_searchable(document)))
        case Not(operand=operand):
            return not matches(operand, document)
        case And(operands=operands):
            return all(matches(operand, document) for operand in operands)
        case Or(operands=operands):
            return any(matches(operand, document) for operand in operands)
        case _:
            assert_never(filter)


def count(documents: Iterable[Document], filter: Filter) -> int:
    """Return how many of ``documents`` match ``filter``."""
    return sum(1 for document in documents if matches(filter, document))


def _candidates(document: JSON, path: Path) -> list[JSON]:
    # a missing path is tested once, as MISSING, so that null operands can match it
    return reached_values(document, path) or [MISSING]


def _equal(value: JSON, operand: JSON) -> bool:
    if value is MISSING:
        return operand is None
    return json_equal(value, operand)


_RANGES: dict[type[Filter], tuple[int, int]] = {Gt: (1, 1), Gte: (0, 1), Lt: (-1, -1),
                                                Lte: (-1, 0)}


def _ordered(value: JSON, operand: JSON, low: int, high: int) -> bool:
    # compare(value, operand) within [low, high]; a null operand stands for "is null or
    # missing" when the range holds 0 ($gte, $lte) and matches nothing otherwise
    if operand is None:
        return low <= 0 <= high and (value is None or value is MISSING)
    if type_class(value) != type_class(operand):
        return False
    return low <= compare(value, operand) <= high


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


@functools.lru_cache(maxsize=256)
def _compile(pattern: str, options: str) -> re.Pattern[str]:
    flags = re.NOFLAG
    for letter in options:
        flags |= _FLAGS[letter]
    return re.compile(pattern, flags)


def _element_matches(query: Filter, element: JSON, *, objects: bool) -> bool:
    if objects:
        return isinstance(element, dict) and matches(query, element)
    return not isinstance(element, dict | list) and matches(query, element)


def _searchable(document: JSON) -> JSON:
    if isinstance(document, dict):
        return [value for key, value in document.items() if key not in SYSTEM_FIELDS]
    return document


def _strings(value: JSON) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# ---------------------------------------------------------------------------- sorting


def sort_documents(documents: Iterable[Document], sort: Sequence[SortKey]) -> list[Document]:
    """Return the documents (not copies) ordered by ``sort``, then ``_id`` ascending.

    Each key orders by the total order of :mod:`docbase.core.ordering`. The sort value
    of a document is taken from its :func:`path_values`, every array among them
    replaced by its elements (one level): ascending uses the smallest of these values,
    descending the largest. No value at all (a missing path, an empty array) sorts as
    null. So ``items.sku`` over ``[{"sku": "b"}, {"sku": "a"}]`` sorts as ``"a"``
    ascending and ``"b"`` descending. Equal documents keep ``_id`` ascending order in
    both directions.
    """
    result = sorted(documents, key=lambda document: sort_key(document.get("_id")))
    for key in reversed(sort):
        descending = key.direction == -1
        result.sort(key=functools.partial(_sort_value, path=key.path, descending=descending),
                    reverse=descending)
    return result


def _sort_value(document: Document, *, path: Path, descending: bool) -> OrderKey:
    keys = [sort_key(item)
            for value in path_values(document, path)
            for item in (value if isinstance(value, list) else [value])]
    if not keys:
        return sort_key(None)
    return max(keys) if descending else min(keys)


# ---------------------------------------------------------------------------- shaping

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
        return copy.deepcopy(document)
    if projection.include:
        tree = _tree(projection.paths)
        tree["_id"] = None
        picked: Document = _pick(document, tree)
        return picked
    result = copy.deepcopy(document)
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
            kept = copy.deepcopy(item) if subtree is None else _pick(item, subtree)
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


def run_query(documents: Iterable[Document], query: Query) -> list[Document]:
    """Filter, sort, skip, limit (``None``: no limit) and project; return deep copies.

    ``query.groupby``, ``query.aggregates`` and ``query.grand_total`` are ignored here
    (see :func:`aggregate`).
    """
    selected = [document for document in documents if matches(query.filter, document)]
    ordered = sort_documents(selected, query.sort)
    end = None if query.limit is None else query.skip + query.limit
    return [project(document, query.projection) for document in ordered[query.skip:end]]


# ---------------------------------------------------------------------------- grouping


def aggregate(
    documents: Iterable[Document],
    groupby: Sequence[Path],
    aggregates: Sequence[Aggregate],
) -> list[AggregateRow]:
    """Group ``documents`` by the values at ``groupby`` and compute ``aggregates``.

    A group key holds one :func:`group_key` per path (missing and null are ``None``
    and group together; values equal by :func:`json_equal` group together, the first
    one met becoming the key). Rows come in ascending total order of their keys,
    compared element by element. Without ``groupby`` there is exactly one row, keyed
    ``()``, even for no documents.

    Each aggregate reads the plain value at its field like :func:`group_key` (objects
    only, no array expansion). ``SUM`` adds the numbers (booleans are not numbers; an
    int total stays an int; no numbers: 0); ``AVG`` is their float mean (no numbers:
    ``None``); ``MIN``/``MAX`` take the least/greatest present, non-null value in the
    total order (``None`` when none); ``COUNT`` counts the documents of the group.
    Results are under :attr:`Aggregate.key`.
    """
    groups: dict[tuple[OrderKey, ...], tuple[tuple[JSON, ...], list[Document]]] = {}
    if not groupby:
        groups[()] = ((), [])
    for document in documents:
        key = tuple(group_key(document, path) for path in groupby)
        identity = tuple(sort_key(value) for value in key)
        groups.setdefault(identity, (key, []))[1].append(document)
    return [
        AggregateRow(copy.deepcopy(key), {a.key: _aggregate_value(a, members)
                                          for a in aggregates})
        for key, members in (groups[identity] for identity in sorted(groups))
    ]


def _aggregate_value(spec: Aggregate, members: list[Document]) -> JSON:
    if spec.func == "COUNT":
        return len(members)
    values = [value for value in (_plain_value(document, spec.path) for document in members)
              if value is not MISSING and value is not None]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    match spec.func:
        case "SUM":
            return sum(numbers)
        case "AVG":
            return sum(numbers) / len(numbers) if numbers else None
        case "MIN":
            return copy.deepcopy(min(values, key=sort_key)) if values else None
        case "MAX":
            return copy.deepcopy(max(values, key=sort_key)) if values else None
