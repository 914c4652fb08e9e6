"""The aggregation pipelines of reads: a page of a list, the sort probe, a grouping.

Each starts with the compiled ``$match``. A page is sorted by the computed keys of
:mod:`.sorting`, skipped and limited on the server, and trimmed to the top-level fields
core's projection will look at (core then shapes each document exactly).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docbase.adapters.mongo.codec import SEARCH_FIELD
from docbase.adapters.mongo.expressions import literal, plain_field
from docbase.adapters.mongo.grouping import group_stages
from docbase.adapters.mongo.keyset import keyset_match
from docbase.adapters.mongo.sorting import composite_probe, key_fields, sort_stages
from docbase.core.query import Aggregate, Path, Query, SortKey

Stage = dict[str, Any]


def page_pipeline(match: Stage, query: Query) -> list[Stage]:
    """Filter, seek past the cursor, sort (then ``_id``), skip, limit and trim."""
    sorting = sort_stages(query.sort)  # [compute the keys,] sort
    seek = keyset_match(query)
    pipeline = [{"$match": match}, *sorting[:-1], *([seek] if seek else []), sorting[-1]]
    if query.skip:
        pipeline.append({"$skip": query.skip})
    if query.limit is not None:
        pipeline.append({"$limit": query.limit})
    pipeline.append(_trim(query))
    return pipeline


def unsortable_pipeline(match: Stage, sort: Sequence[SortKey]) -> list[Stage]:
    """Find one matching document whose sort value the computed keys cannot order."""
    return [{"$match": match}, sort_stages(sort)[0], composite_probe(sort), {"$limit": 1},
            {"$project": {"_id": 1}}]


def group_pipeline(match: Stage, groupby: Sequence[Path], aggregates: Sequence[Aggregate]
                   ) -> list[Stage]:
    """Group the matching documents, taken in ``_id`` order as core's sums need."""
    return [{"$match": match}, {"$sort": {"_id": 1}}, *group_stages(groupby, aggregates)]


def _trim(query: Query) -> Stage:
    """Drop the top-level fields nobody needs; core shapes the rest exactly.

    An inclusion goes through ``$objectToArray``/``$arrayToObject`` rather than
    ``$project``, which some servers answer in the projection's field order instead of
    the document's.
    """
    projection = query.projection
    if projection is not None and projection.include:
        keep = sorted({"_id", *(path[0] for path in projection.paths)})
        return {"$replaceRoot": {"newRoot": {"$arrayToObject": {"$filter": {
            "input": {"$objectToArray": "$$ROOT"}, "as": "f",
            "cond": {"$in": ["$$f.k", literal(keep)]}}}}}}
    dropped = {SEARCH_FIELD, *key_fields(query.sort)}
    if projection is not None:  # "$project" reads a dotted name as a path: core drops it
        dropped.update(path[0] for path in projection.paths
                       if len(path) == 1 and path != ("_id",) and plain_field(path[0]))
    return {"$project": dict.fromkeys(sorted(dropped), 0)}
