"""The typed AST of the query language: filter nodes, :class:`Query` and :class:`ReadOptions`.

The parsers of :mod:`docbase.core.query` build these nodes from ``q``, ``h`` and URL
parameters; adapters compile them and none of them ever sees raw JSON queries.
``docs/query.md`` says what each node means; :mod:`docbase.core.evaluate` is its
executable form.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

Path: TypeAlias = tuple[str, ...]
"""A dot path split into steps; the empty path is the value itself (inside $elemMatch)."""

JSON: TypeAlias = Any
"""A JSON value: None, bool, int, float, str, list or dict with str keys."""


class Eq(msgspec.Struct, frozen=True, tag="eq"):
    """Any value reached by ``path`` equals ``value`` (``None`` also matches missing)."""

    path: Path
    value: JSON


class Ne(msgspec.Struct, frozen=True, tag="ne"):
    """Negation of :class:`Eq`; matches missing paths."""

    path: Path
    value: JSON


class Gt(msgspec.Struct, frozen=True, tag="gt"):
    """A reached value of the operand's type class is greater than ``value``."""

    path: Path
    value: JSON


class Gte(msgspec.Struct, frozen=True, tag="gte"):
    """A reached value of the operand's type class is >= ``value``."""

    path: Path
    value: JSON


class Lt(msgspec.Struct, frozen=True, tag="lt"):
    """A reached value of the operand's type class is less than ``value``."""

    path: Path
    value: JSON


class Lte(msgspec.Struct, frozen=True, tag="lte"):
    """A reached value of the operand's type class is <= ``value``."""

    path: Path
    value: JSON


class Between(msgspec.Struct, frozen=True, tag="bt"):
    """One reached value is ``>= low`` and ``<= high`` (``$bt``)."""

    path: Path
    low: JSON
    high: JSON


class In(msgspec.Struct, frozen=True, tag="in"):
    """Any reached value equals any of ``values``."""

    path: Path
    values: tuple[JSON, ...]


class Nin(msgspec.Struct, frozen=True, tag="nin"):
    """Negation of :class:`In`; matches missing paths."""

    path: Path
    values: tuple[JSON, ...]


class Regex(msgspec.Struct, frozen=True, tag="regex"):
    """A reached string value matches ``pattern`` with ``options`` (subset of ``imsx``)."""

    path: Path
    pattern: str
    options: str = ""


class Exists(msgspec.Struct, frozen=True, tag="exists"):
    """The path is present (``present=True``) or missing (``present=False``)."""

    path: Path
    present: bool


class ElemMatch(msgspec.Struct, frozen=True, tag="elemmatch"):
    """The value at ``path`` is an array with one element matching ``query``.

    When ``objects`` is true, ``query`` holds field conditions and only object elements
    are considered; otherwise ``query`` holds conditions on the element itself (empty path).
    """

    path: Path
    query: Filter
    objects: bool


class Text(msgspec.Struct, frozen=True, tag="text"):
    """Case-insensitive substring of any string value at any depth, system fields excluded."""

    text: str


class Not(msgspec.Struct, frozen=True, tag="not"):
    """True when ``operand`` is false."""

    operand: Filter


class And(msgspec.Struct, frozen=True, tag="and"):
    """All operands hold; an empty ``And`` matches every document."""

    operands: tuple[Filter, ...] = ()


class Or(msgspec.Struct, frozen=True, tag="or"):
    """At least one operand holds."""

    operands: tuple[Filter, ...]


Filter: TypeAlias = (
    Eq | Ne | Gt | Gte | Lt | Lte | Between | In | Nin | Regex | Exists | ElemMatch | Text
    | Not | And | Or
)
FieldFilter: TypeAlias = Eq | Ne | Gt | Gte | Lt | Lte | Between | In | Nin | Regex | Exists
MATCH_ALL = And(())

AggregateFunc: TypeAlias = Literal["SUM", "AVG", "MIN", "MAX", "COUNT"]


class SortKey(msgspec.Struct, frozen=True):
    """Sort by ``path``; ``direction`` is 1 ascending or -1 descending."""

    path: Path
    direction: Literal[1, -1] = 1


class Projection(msgspec.Struct, frozen=True):
    """Keep only ``paths`` (plus ``_id``) when ``include``, else drop them."""

    paths: tuple[Path, ...]
    include: bool


class Aggregate(msgspec.Struct, frozen=True):
    """One aggregate function; ``field`` is kept verbatim for the result key."""

    func: AggregateFunc
    field: str

    @property
    def path(self) -> Path:
        """The field as a path (empty for ``COUNT:``)."""
        return tuple(self.field.split(".")) if self.field else ()

    @property
    def key(self) -> str:
        """The result key, ``"<FUNC> <field>"``."""
        return f"{self.func} {self.field}"


class AggregateRow(msgspec.Struct, frozen=True):
    """One group of an aggregation: its key (one value per groupby path) and results.

    ``values`` maps each aggregate's :attr:`Aggregate.key` (``"SUM score"``) to its
    result. A missing or null group value is ``None``.
    """

    key: tuple[JSON, ...]
    values: dict[str, JSON]


class After(msgspec.Struct, frozen=True):
    """Keyset paging: only documents after this one in the query's order (``$after``).

    ``values`` holds the sort value of each key of ``sort`` (``None`` for missing or
    null) and ``id`` the ``_id`` that broke the tie; a document comes after when its
    (values, ``_id``) follow these in the order of ``sort`` then ``_id`` ascending.
    ``sort`` is the order the cursor was made for; it must equal :attr:`Query.sort`.
    """

    sort: tuple[SortKey, ...]
    values: tuple[JSON, ...]
    id: str


DEFAULT_MAX = 1000


class Query(msgspec.Struct, frozen=True):
    """Everything a list read asks of a store: filter, order, page, shape, grouping.

    Sorting always ends with ``_id`` ascending as the final tie-breaker; ``sort`` holds
    only what the caller asked for. ``limit=None`` means no limit. ``after`` keeps only
    the documents that follow a cursor's (before ``skip`` applies).
    """

    filter: Filter = MATCH_ALL
    sort: tuple[SortKey, ...] = ()
    skip: int = 0
    limit: int | None = DEFAULT_MAX
    projection: Projection | None = None
    groupby: tuple[Path, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    grand_total: bool = False
    after: After | None = None


class ReadOptions(msgspec.Struct, frozen=True):
    """URL switches that shape a list response rather than select documents."""

    totals: bool = False
    count: bool = False
    metafields: bool = False
    fetchchildren: bool = False
