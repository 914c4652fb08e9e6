"""The shapes of query users send, on a collection of generated people documents.

One definition serves the query-shape benchmark (``benchmarks/query_shapes.py``,
timings against get-by-id) and the plan check (``tests/test_query_plans.py``, which
fails when a shape's plan degrades to a scan). Document ``i`` of ``size`` has a unique
``email``, a ``status`` shared by one document in :data:`STATUSES` (0.2 %), a
``price``, a ``vip`` flag true for one in 1,000, a nested ``address.city``, an array
of ``tags``, a lookup field ``customer`` (``[{"_id": ...}]``, as
``docbase/core/schema/values.py`` stores one) and an author (``_createdby``) shared by
one document in :data:`OWNERS` (0.1 %).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from docbase.core.query import Query
from docbase.core.query.filters import parse_filter
from docbase.core.query.hints import parse_hints

STATUSES = 500
OWNERS = 1_000
INDEXED = ("email", "status", "price", "vip", "name", "address.city", "tags", "customer._id",
           "_created", "_createdby")
"""The fields the shapes query, as ``index: true`` would declare them."""


class Shape(NamedTuple):
    """One query as a user writes it (``q`` and ``h``), found or counted."""

    name: str
    kind: Literal["find", "count"]
    q: dict[str, Any]
    h: dict[str, Any]
    scans: bool = False  # no index can serve it (docs/sql-adapter.md says why)

    @property
    def query(self) -> Query:
        """The query a list read with this ``q`` and ``h`` asks of a store."""
        return parse_hints(self.h, Query(filter=parse_filter(self.q)))


def lookup_id(i: int) -> str:
    """The ObjectID document ``i``'s ``customer`` lookup points to (1,000 of them)."""
    return f"{i % 1000:024x}"


def body(i: int) -> dict[str, Any]:
    """The fields of document ``i`` (docbase adds its own with ``new_document``)."""
    return {"email": f"user{i}@example.com", "name": f"name {i}",
            "status": f"s{i % STATUSES}", "price": (i * 37) % 1000 / 10,
            "vip": i % 1000 == 0, "address": {"city": f"city{i % 2000}"},
            "tags": [f"t{i % 500}", f"u{i % 7}"], "customer": [{"_id": lookup_id(i)}]}


def owner(i: int) -> str:
    """The author of document ``i`` (its ``_createdby``)."""
    return f"owner{i % OWNERS}@example.com"


def shapes(size: int) -> list[Shape]:
    """Every shape, its operands chosen to exist among ``size`` documents."""
    some = size // 2 + 7
    emails = [f"user{size // 7 * k + 3}@example.com" for k in range(1, 6)]
    return [
        Shape("equality on email, 1 match", "find", {"email": f"user{some}@example.com"}, {}),
        Shape("the same, sorted by email", "find", {"email": f"user{some}@example.com"},
              {"$orderby": {"email": 1}}),
        Shape("equality 0.2 %, sorted by another field, 20", "find", {"status": "s17"},
              {"$orderby": {"price": -1}, "$max": 20}),
        Shape("range matching nothing, sorted, 20", "find", {"price": {"$gt": 1000}},
              {"$orderby": {"price": 1}, "$max": 20}),
        Shape("newest first (_created -1), 20", "find", {},
              {"$orderby": {"_created": -1}, "$max": 20}),
        Shape("a rare boolean, 20", "find", {"vip": True}, {"$max": 20}),
        Shape("$in of 5 emails", "find", {"email": {"$in": emails}}, {}),
        Shape("count of a 0.2 % match", "count", {"status": "s17"}, {}),
        Shape("$or of two equalities, 20", "find",
              {"$or": [{"email": emails[0]}, {"status": "s18"}]}, {"$max": 20}),
        Shape("prefix $regex, 20", "find", {"name": {"$regex": f"^name {some}"}}, {"$max": 20}),
        Shape("nested field, 20", "find", {"address.city": "city33"}, {"$max": 20}),
        Shape("array element, 20", "find", {"tags": "t33"}, {"$max": 20}),
        Shape("lookup field's _id, 20", "find", {"customer._id": lookup_id(33)}, {"$max": 20}),
        Shape("$in of 2 array elements, 20", "find", {"tags": {"$in": ["t33", "t34"]}},
              {"$max": 20}),
        Shape("count of an array element", "count", {"tags": "t33"}, {}),
        Shape("per-owner list (_createdby, _id -1), 20", "find",
              {"_createdby": owner(33)}, {"$orderby": {"_id": -1}, "$max": 20}),
    ]
