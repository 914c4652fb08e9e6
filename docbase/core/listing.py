"""Shapes of list responses: totals, grouped documents and aggregate results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from docbase.core.grouping import group_key
from docbase.core.ordering import sort_key
from docbase.core.query import JSON, AggregateRow, Path, Query


def group_label(value: JSON) -> str:
    """The JSON object key for a group value: strings as they are, others as JSON."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


def nest_rows(rows: Sequence[AggregateRow]) -> dict[str, Any]:
    """Turn aggregate rows into nested objects keyed by each group value in turn."""
    result: dict[str, Any] = {}
    for row in rows:
        node = result
        for value in row.key[:-1]:
            node = node.setdefault(group_label(value), {})
        node[group_label(row.key[-1])] = dict(row.values)
    return result


def group_documents(documents: Sequence[dict[str, Any]], groupby: Sequence[Path]) -> Any:
    """Group documents into nested objects keyed by each group value, in sort order."""
    if not groupby:
        return list(documents)
    buckets: dict[str, tuple[JSON, list[dict[str, Any]]]] = {}
    for document in documents:
        value = group_key(document, groupby[0])
        buckets.setdefault(group_label(value), (value, []))[1].append(document)
    ordered = sorted(buckets.items(), key=lambda item: sort_key(item[1][0]))
    return {label: group_documents(docs, groupby[1:]) for label, (_, docs) in ordered}


def totals(data_count: int, total: int, query: Query) -> dict[str, Any]:
    """The ``totals`` object of ``totals=true``."""
    return {"total": total, "count": data_count, "skip": query.skip, "max": query.limit}
