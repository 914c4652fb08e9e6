"""The reference semantics of a query: matching, sorting, paging, projection, grouping.

This is the semantics of ``docs/query.md`` in executable form. The memory adapter runs it; the SQL
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
- Grouping and the aggregated fields follow objects only
  (:func:`docbase.core.grouping.group_key`); projection is in :mod:`docbase.core.projection`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import assert_never

from docbase.core.documents import SYSTEM_FIELDS, Document
from docbase.core.ordering import MISSING, OrderKey, compare, sort_key, type_class
from docbase.core.projection import project
from docbase.core.query import (
    JSON,
    After,
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
    Query,
    Regex,
    SortKey,
    Text,
    check_after,
)
from docbase.core.query.regex import regex_search

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


def array_index(step: str) -> int | None:
    """Return the array index a path step stands for: canonical decimals only."""
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
    index = array_index(step)
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


# ---------------------------------------------------------------------------- matching


def matches(filter: Filter, document: JSON) -> bool:
    """Tell whether ``document`` satisfies ``filter``, per ``docs/query.md`` ("Semantics").

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
            return any(isinstance(v, str) and regex_search(pattern, options, v)
                       for v in reached_values(document, path))
        case Exists(path=path, present=present):
            return bool(path_values(document, path)) == present
        case ElemMatch(path=path, query=query, objects=objects):
            return any(isinstance(array, list) and any(
                _element_matches(query, element, objects=objects) for element in array)
                for array in path_values(document, path))
        case Text(text=text):
            needle = text.lower()
            return any(needle in s for s in search_strings(document))
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


def _element_matches(query: Filter, element: JSON, *, objects: bool) -> bool:
    if objects:
        return isinstance(element, dict) and matches(query, element)
    return not isinstance(element, dict | list) and matches(query, element)


def lowered_strings(value: JSON) -> list[str]:
    """List the distinct strings in ``value`` at any depth, lower-cased by :meth:`str.lower`.

    Adapters that keep a search column or field store exactly this, so that their text
    search equals :func:`matches` on :class:`~docbase.core.query.Text`.
    """
    found: dict[str, None] = {}
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found[item.lower()] = None
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return list(found)


def search_strings(document: JSON) -> list[str]:
    """The strings ``filter=text`` searches: :func:`lowered_strings` outside system fields."""
    if isinstance(document, dict):
        document = [value for key, value in document.items() if key not in SYSTEM_FIELDS]
    return lowered_strings(document)


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
    return sort_key(sort_value(document, path, descending=descending))


def sort_value(document: Document, path: Path, *, descending: bool) -> JSON:
    """The value ``document`` sorts by on ``path`` (``None``: no value, sorts as null)."""
    items = [item for value in path_values(document, path)
             for item in (value if isinstance(value, list) else [value])]
    pick = max if descending else min
    return pick(items, key=sort_key) if items else None


def follows(document: Document, after: After, sort: Sequence[SortKey]) -> bool:
    """Whether ``document`` comes after the cursor ``after`` in ``sort`` then ``_id``."""
    for key, value in zip(sort, after.values, strict=True):
        descending = key.direction == -1
        order = compare(sort_value(document, key.path, descending=descending), value)
        if order:
            return order == (-1 if descending else 1)
    return compare(document.get("_id"), after.id) > 0


def run_query(documents: Iterable[Document], query: Query) -> list[Document]:
    """Filter, keep what follows ``query.after``, sort, skip, limit and project (copies).

    ``limit=None`` is no limit. ``query.groupby``, ``query.aggregates`` and
    ``query.grand_total`` are ignored here (see :func:`docbase.core.grouping.aggregate`).
    """
    after = check_after(query).after
    selected = [document for document in documents if matches(query.filter, document)
                and (after is None or follows(document, after, query.sort))]
    ordered = sort_documents(selected, query.sort)
    end = None if query.limit is None else query.skip + query.limit
    return [project(document, query.projection) for document in ordered[query.skip:end]]
