"""Keyset paging on the server: the ``$match`` keeping what follows a cursor.

A page read with a cursor (:class:`~docbase.core.query.After`) keeps the documents
whose sort keys and ``_id`` come after the cursor's. The keys are the computed fields
of :mod:`.sorting` (``r``, the rank of the value's type class, and ``v``, a scalar
value), so the test follows the order the page is sorted in::

    r1 > c1.r OR (r1 = c1.r AND (v1 > c1.v OR (v1 = c1.v AND (... _id > c.id))))

(``<`` for a descending key). Within one rank every value has one type, which MongoDB
compares as core does. A cursor whose value is an object or an array, or whose ``_id``
is no ObjectId, cannot be written so: :func:`on_server` says no and the store pages
that query with core, as it does for a sort the computed keys cannot order.
"""

from __future__ import annotations

from typing import Any

from docbase.adapters.mongo.codec import object_id
from docbase.adapters.mongo.sorting import SORT_FIELD
from docbase.core.ordering import type_class, type_rank
from docbase.core.query import After, Query

Stage = dict[str, Any]


def on_server(query: Query) -> bool:
    """Whether the server can seek past ``query``'s cursor (true without one)."""
    after = query.after
    return after is None or (object_id(after.id) is not None and all(
        type_class(value) not in ("object", "array") for value in after.values))


def keyset_match(query: Query) -> Stage | None:
    """The ``$match`` stage (after the sort keys are computed) past the cursor, if any."""
    after: After | None = query.after
    if after is None:
        return None
    test: Stage = {"_id": {"$gt": object_id(after.id)}}
    for index in reversed(range(len(after.values))):
        descending = query.sort[index].direction == -1
        later, same = _key_tests(f"{SORT_FIELD}{index}", after.values[index], descending)
        test = {"$or": [later, {"$and": [same, test]}]}
    return {"$match": test}


def _key_tests(field: str, value: Any, descending: bool) -> tuple[Stage, Stage]:
    beyond = "$lt" if descending else "$gt"
    rank = type_rank(value)
    if rank == 0:  # null or missing: the value field is null too
        return {f"{field}.r": {beyond: 0}}, {f"{field}.r": 0}
    later = {"$or": [{f"{field}.r": {beyond: rank}},
                     {f"{field}.r": rank, f"{field}.v": {beyond: value}}]}
    return later, {f"{field}.r": rank, f"{field}.v": value}
