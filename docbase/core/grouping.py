"""Grouping and aggregates: the reference meaning of ``$groupby`` and ``$aggregate``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from docbase.core.documents import Document, json_copy
from docbase.core.ordering import MISSING, OrderKey, sort_key
from docbase.core.query import JSON, Aggregate, AggregateRow, Path


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
    only, no array expansion). ``SUM`` adds the numbers with :func:`number_sum`
    (booleans are not numbers; no numbers: 0); ``AVG`` is that sum over the count (no numbers:
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
        AggregateRow(json_copy(key), {a.key: _aggregate_value(a, members)
                                          for a in aggregates})
        for key, members in (groups[identity] for identity in sorted(groups))
    ]


def number_sum(numbers: Iterable[int | float]) -> int | float:
    """The sum of ``numbers``: exact for integers, correctly rounded once a float takes part.

    ``math.fsum`` makes the float sum independent of the order the numbers come in, so
    every adapter, adding them in whatever order its engine hands them over, answers
    the same.
    """
    numbers = list(numbers)
    if all(isinstance(n, int) for n in numbers):
        return sum(numbers)
    return math.fsum(numbers)


def _aggregate_value(spec: Aggregate, members: list[Document]) -> JSON:
    if spec.func == "COUNT":
        return len(members)
    values = [value for value in (_plain_value(document, spec.path) for document in members)
              if value is not MISSING and value is not None]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    match spec.func:
        case "SUM":
            return number_sum(numbers)
        case "AVG":
            return number_sum(numbers) / len(numbers) if numbers else None
        case "MIN":
            return json_copy(min(values, key=sort_key)) if values else None
        case "MAX":
            return json_copy(max(values, key=sort_key)) if values else None
