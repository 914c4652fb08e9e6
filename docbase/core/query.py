"""The query language: a typed AST and the one parser from JSON/URL input to it.

``q`` (a JSON query object), ``h`` (a JSON hints object) and the URL parameters of a
list request are parsed here, once, into :class:`Query`. Adapters compile the AST;
none of them ever sees raw JSON queries. Anything malformed or unsupported raises
:class:`InvalidQuery` naming the offending part. ``QUERY-SEMANTICS.md`` says what each
node means; ``docbase.core.evaluate`` is its executable form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.ids import format_timestamp

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


DEFAULT_MAX = 1000


class Query(msgspec.Struct, frozen=True):
    """Everything a list read asks of a store: filter, order, page, shape, grouping.

    Sorting always ends with ``_id`` ascending as the final tie-breaker; ``sort`` holds
    only what the caller asked for. ``limit=None`` means no limit.
    """

    filter: Filter = MATCH_ALL
    sort: tuple[SortKey, ...] = ()
    skip: int = 0
    limit: int | None = DEFAULT_MAX
    projection: Projection | None = None
    groupby: tuple[Path, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    grand_total: bool = False


class ReadOptions(msgspec.Struct, frozen=True):
    """URL switches that shape a list response rather than select documents."""

    totals: bool = False
    count: bool = False
    metafields: bool = False
    fetchchildren: bool = False


# ---------------------------------------------------------------------------- parsing

_FIELD_OPERATORS = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$bt", "$in", "$nin", "$regex",
     "$options", "$exists", "$not", "$elemMatch"}
)
_UNSUPPORTED_REGEX = re.compile(
    r"\(\?<[=!]|\\[1-9]|\(\?P[=<>]|\(\?<\w|\\k<|\(\?\(|\(\?[aLu]"  # look-behind, backrefs, names
    r"|\(\?>|(?<!\\)[*+?}]\+"  # atomic groups and possessive quantifiers
)
_REGEX_OPTIONS = frozenset("imsx")
MAX_DEPTH = 32


def parse_json(text: str, what: str) -> JSON:
    """Decode a JSON parameter, or raise :class:`InvalidQuery` naming ``what``."""
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError) as exc:  # msgspec recurses per nesting level
        raise InvalidQuery(f"{what} is not valid JSON: {exc}") from exc


def parse_filter(q: JSON, *, now: datetime | None = None) -> Filter:
    """Parse a ``q`` object into a :class:`Filter`.

    Raises:
        InvalidQuery: ``q`` is not an object, or holds an unknown operator or bad operand.

    """
    if not isinstance(q, dict):
        raise InvalidQuery("q must be a JSON object")
    return _FilterParser(now or datetime.now(UTC)).document(q, (), depth=0)


def split_path(name: str, where: str = "field") -> Path:
    """Split a dot path, refusing empty steps and ``$`` steps."""
    if not isinstance(name, str) or not name:
        raise InvalidQuery(f"{where} name must be a non-empty string")
    steps = tuple(name.split("."))
    for step in steps:
        if not step or step.startswith("$"):
            raise InvalidQuery(f"invalid {where} path {name!r}")
    return steps


class _FilterParser:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def document(self, q: dict[str, JSON], prefix: Path, depth: int) -> Filter:
        if depth > MAX_DEPTH:
            raise InvalidQuery(f"query is nested deeper than {MAX_DEPTH} levels")
        parts: list[Filter] = []
        for key, value in q.items():
            if key in ("$and", "$or"):
                parts.append(self.logical(key, value, prefix, depth))
            elif key.startswith("$"):
                raise InvalidQuery(f"unknown or unsupported top-level operator {key!r}")
            else:
                parts.append(self.field(prefix + split_path(key), value, depth))
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def logical(self, op: str, value: JSON, prefix: Path, depth: int) -> Filter:
        if not isinstance(value, list) or not value:
            raise InvalidQuery(f"{op} needs a non-empty array of query objects")
        operands = []
        for item in value:
            if not isinstance(item, dict):
                raise InvalidQuery(f"every element of {op} must be a query object")
            operands.append(self.document(item, prefix, depth + 1))
        return And(tuple(operands)) if op == "$and" else Or(tuple(operands))

    def field(self, path: Path, value: JSON, depth: int) -> Filter:
        if isinstance(value, dict) and any(k.startswith("$") for k in value):
            if set(value) == {"$date"}:
                return Eq(path, self.date(value["$date"]))
            if not all(k.startswith("$") for k in value):
                raise InvalidQuery(f"cannot mix operators and fields in the condition on "
                                   f"{'.'.join(path)!r}")
            return self.operators(path, value, depth)
        return Eq(path, self.literal(value, path))

    def operators(self, path: Path, ops: dict[str, JSON], depth: int) -> Filter:
        if depth > MAX_DEPTH:  # nested $not never passes through document()
            raise InvalidQuery(f"query is nested deeper than {MAX_DEPTH} levels")
        dotted = ".".join(path) or "element"
        unknown = [k for k in ops if k not in _FIELD_OPERATORS]
        if unknown:
            raise InvalidQuery(f"unknown or unsupported operator {unknown[0]!r} on {dotted!r}")
        if "$options" in ops and "$regex" not in ops:
            raise InvalidQuery(f"$options without $regex on {dotted!r}")
        conds: list[Filter] = []
        for op, operand in ops.items():
            match op:
                case "$eq":
                    conds.append(Eq(path, self.value(operand, path)))
                case "$ne":
                    conds.append(Ne(path, self.value(operand, path)))
                case "$gt":
                    conds.append(Gt(path, self.value(operand, path)))
                case "$gte":
                    conds.append(Gte(path, self.value(operand, path)))
                case "$lt":
                    conds.append(Lt(path, self.value(operand, path)))
                case "$lte":
                    conds.append(Lte(path, self.value(operand, path)))
                case "$bt":
                    if not isinstance(operand, list) or len(operand) != 2:
                        raise InvalidQuery(f"$bt on {dotted!r} needs an array [low, high]")
                    conds.append(Between(path, self.value(operand[0], path),
                                         self.value(operand[1], path)))
                case "$in" | "$nin":
                    if not isinstance(operand, list):
                        raise InvalidQuery(f"{op} on {dotted!r} needs an array")
                    values = tuple(self.value(v, path) for v in operand)
                    conds.append(In(path, values) if op == "$in" else Nin(path, values))
                case "$regex":
                    conds.append(self.regex(path, operand, ops.get("$options", "")))
                case "$exists":
                    if not isinstance(operand, bool) and operand not in (0, 1):
                        raise InvalidQuery(f"$exists on {dotted!r} needs true or false")
                    conds.append(Exists(path, bool(operand)))
                case "$not":
                    conds.append(Not(self.negated(path, operand, depth)))
                case "$elemMatch":
                    conds.append(self.elem_match(path, operand, depth))
                case _:  # "$options", consumed by "$regex"
                    pass
        return conds[0] if len(conds) == 1 else And(tuple(conds))

    def negated(self, path: Path, operand: JSON, depth: int) -> Filter:
        if isinstance(operand, dict) and operand and all(k.startswith("$") for k in operand):
            if set(operand) == {"$date"}:
                return Eq(path, self.date(operand["$date"]))
            return self.operators(path, operand, depth + 1)
        # restdb.io accepts {"field": {"$not": value}} meaning "not equal to value"
        return Eq(path, self.literal(operand, path))

    def elem_match(self, path: Path, operand: JSON, depth: int) -> Filter:
        dotted = ".".join(path)
        if not isinstance(operand, dict) or not operand:
            raise InvalidQuery(f"$elemMatch on {dotted!r} needs a non-empty object")
        operators = [k for k in operand if k.startswith("$")]
        if operators and set(operators) - {"$and", "$or"}:
            if len(operators) != len(operand):
                raise InvalidQuery(f"$elemMatch on {dotted!r} mixes operators and fields")
            return ElemMatch(path, self.operators((), operand, depth + 1), objects=False)
        return ElemMatch(path, self.document(operand, (), depth + 1), objects=True)

    def regex(self, path: Path, pattern: JSON, options: JSON) -> Regex:
        dotted = ".".join(path) or "element"
        if not isinstance(pattern, str):
            raise InvalidQuery(f"$regex on {dotted!r} needs a string pattern")
        if not isinstance(options, str) or set(options) - _REGEX_OPTIONS:
            raise InvalidQuery(f"$options on {dotted!r} may only hold the letters i, m, s, x")
        if _UNSUPPORTED_REGEX.search(pattern):
            raise InvalidQuery(f"$regex on {dotted!r} uses an unsupported construct "
                               "(look-behind, backreference, named group, atomic group or "
                               "possessive quantifier)")
        try:
            re.compile(pattern, _regex_flags(options))
        except re.error as exc:
            raise InvalidQuery(f"$regex on {dotted!r} is not a valid pattern: {exc}") from exc
        return Regex(path, pattern, "".join(sorted(set(options))))

    def value(self, operand: JSON, path: Path) -> JSON:
        if isinstance(operand, dict) and set(operand) == {"$date"}:
            return self.date(operand["$date"])
        return self.literal(operand, path)

    def literal(self, value: JSON, path: Path) -> JSON:
        if isinstance(value, dict):
            for key, item in value.items():
                if key.startswith("$"):
                    raise InvalidQuery(f"unknown operator {key!r} inside a value on "
                                       f"{'.'.join(path)!r}")
                self.literal(item, path)
        elif isinstance(value, list):
            for item in value:
                self.literal(item, path)
        return value

    def date(self, value: JSON) -> str:
        return parse_date(value, self.now)


_DYNAMIC_DATES = ("$currentDate", "$currentMonth", "$currentYear", "$now")


def _regex_flags(options: str) -> re.RegexFlag:
    flags = re.RegexFlag(0)
    for letter in options:
        flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}[letter]
    return flags


def parse_date(value: JSON, now: datetime) -> str:
    """Turn a ``$date`` operand into the canonical UTC timestamp string.

    Accepts an ISO-8601 date or date-time (a date alone is midnight UTC, a time without
    offset is UTC), a number of milliseconds since the epoch, or one of the dynamic
    values ``$now``, ``$currentDate`` (today 00:00 UTC), ``$currentMonth`` (the first of
    this month) and ``$currentYear`` (1 January of this year).

    Raises:
        InvalidQuery: the value is none of these.

    """
    utc_now = now.astimezone(UTC)
    if isinstance(value, str) and value in _DYNAMIC_DATES:
        moment = {
            "$now": utc_now,
            "$currentDate": utc_now.replace(hour=0, minute=0, second=0, microsecond=0),
            "$currentMonth": utc_now.replace(day=1, hour=0, minute=0, second=0, microsecond=0),
            "$currentYear": utc_now.replace(month=1, day=1, hour=0, minute=0, second=0,
                                            microsecond=0),
        }[value]
        return format_timestamp(moment)
    if isinstance(value, bool):
        raise InvalidQuery(f"$date value {value!r} is not a date")
    if isinstance(value, int | float):
        try:
            return format_timestamp(datetime.fromtimestamp(value / 1000, UTC))
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidQuery(f"$date value {value!r} is out of range") from exc
    if not isinstance(value, str):
        raise InvalidQuery(f"$date value {value!r} is not a date")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z")
                                        else value)
    except ValueError as exc:
        raise InvalidQuery(f"$date value {value!r} is not an ISO-8601 date") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_timestamp(moment)


# ---------------------------------------------------------------------------- hints


def parse_hints(h: JSON, base: Query | None = None) -> Query:
    """Apply an ``h`` hints object over ``base`` (hints override URL parameters).

    Raises:
        InvalidQuery: an unknown hint or a malformed value.

    """
    query = base or Query()
    if not isinstance(h, dict):
        raise InvalidQuery("h must be a JSON object")
    changes: dict[str, Any] = {}
    for key, value in h.items():
        match key:
            case "$max":
                changes["limit"] = _non_negative_int(value, "$max")
            case "$skip":
                changes["skip"] = _non_negative_int(value, "$skip")
            case "$orderby":
                changes["sort"] = _orderby(value)
            case "$fields":
                changes["projection"] = _fields(value)
            case "$groupby":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise InvalidQuery("$groupby needs an array of field names")
                changes["groupby"] = tuple(split_path(v, "$groupby") for v in value)
            case "$aggregate":
                if not isinstance(value, list):
                    raise InvalidQuery("$aggregate needs an array like [\"SUM:field\"]")
                changes["aggregates"] = tuple(parse_aggregate(v) for v in value)
            case "$aggregate-grand-total":
                if not isinstance(value, bool):
                    raise InvalidQuery("$aggregate-grand-total needs true or false")
                changes["grand_total"] = value
            case _:
                raise InvalidQuery(f"unknown hint {key!r}")
    return msgspec.structs.replace(query, **changes)


def parse_aggregate(spec: JSON) -> Aggregate:
    """Parse ``"FUNC:field"``; ``COUNT:name`` takes any name, others need a field path."""
    if not isinstance(spec, str) or ":" not in spec:
        raise InvalidQuery(f"aggregate {spec!r} must look like \"SUM:field\"")
    func, _, field = spec.partition(":")
    func = func.upper()
    if func not in ("SUM", "AVG", "MIN", "MAX", "COUNT"):
        raise InvalidQuery(f"unknown aggregate function {func!r} in {spec!r}")
    if func != "COUNT":
        split_path(field, f"aggregate {spec!r}")
    return Aggregate(func, field)  # type: ignore[arg-type]


def _non_negative_int(value: JSON, what: str) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidQuery(f"{what} must be a non-negative integer")
    return value


def _direction(value: JSON, what: str) -> Literal[1, -1]:
    if isinstance(value, bool):
        raise InvalidQuery(f"{what} direction must be 1 or -1, not {value!r}")
    if value in (1, "1", "asc"):
        return 1
    if value in (-1, "-1", "desc"):
        return -1
    raise InvalidQuery(f"{what} direction must be 1 or -1, not {value!r}")


def _orderby(value: JSON) -> tuple[SortKey, ...]:
    if not isinstance(value, dict):
        raise InvalidQuery("$orderby needs an object like {\"field\": 1}")
    return tuple(SortKey(split_path(k, "$orderby"), _direction(v, f"$orderby {k!r}"))
                 for k, v in value.items())


def _fields(value: JSON) -> Projection:
    if not isinstance(value, dict) or not value:
        raise InvalidQuery("$fields needs a non-empty object like {\"field\": 1}")
    flags = set()
    for name, given in value.items():
        flag = int(given) if isinstance(given, bool) else given
        if flag not in (0, 1):
            raise InvalidQuery(f"$fields value for {name!r} must be 0 or 1")
        flags.add(flag)
    if len(flags) > 1:
        raise InvalidQuery("$fields cannot mix inclusion (1) and exclusion (0)")
    return Projection(tuple(split_path(k, "$fields") for k in value), include=flags == {1})


# ---------------------------------------------------------------------------- URL

_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no", "")


def _flag(params: Mapping[str, Sequence[str]], name: str) -> bool:
    values = params.get(name)
    if not values:
        return False
    value = values[-1].lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidQuery(f"parameter {name!r} must be true or false")


def parse_list_params(
    params: Mapping[str, Sequence[str]], *, now: datetime | None = None
) -> tuple[Query, ReadOptions]:
    """Parse the URL parameters of a list read (``q``, ``h``, ``filter``, ``sort``, ...).

    ``params`` maps each parameter name to every value it was given, in order.
    Parameters that are not about reading (``apikey``, ``jwt``, ...) are ignored.

    Raises:
        InvalidQuery: a malformed parameter, naming it.

    """
    def last(name: str) -> str | None:
        values = params.get(name)
        return values[-1] if values else None

    conditions: list[Filter] = []
    q = last("q")
    if q is not None and q.strip():
        parsed = parse_filter(parse_json(q, "q"), now=now)
        if parsed != MATCH_ALL:
            conditions.append(parsed)
    text = last("filter")
    if text:
        conditions.append(Text(text))
    sorts = params.get("sort") or []
    dirs = params.get("dir") or []
    if len(dirs) > len(sorts):
        raise InvalidQuery("more dir parameters than sort parameters")
    sort = tuple(
        SortKey(split_path(name, "sort"), _direction(dirs[i] if i < len(dirs) else 1, "dir"))
        for i, name in enumerate(sorts)
    )
    skip_text, max_text = last("skip"), last("max")
    query = Query(
        filter=conditions[0] if len(conditions) == 1 else And(tuple(conditions)),
        sort=sort,
        skip=_non_negative_int(skip_text, "skip") if skip_text is not None else 0,
        limit=_non_negative_int(max_text, "max") if max_text is not None else DEFAULT_MAX,
        groupby=tuple(split_path(g, "groupby") for g in params.get("groupby") or []),
        aggregates=tuple(parse_aggregate(a) for a in params.get("aggregate") or []),
    )
    h = last("h")
    if h is not None and h.strip():
        query = parse_hints(parse_json(h, "h"), query)
    options = ReadOptions(
        totals=_flag(params, "totals"),
        count=_flag(params, "count"),
        metafields=_flag(params, "metafields"),
        fetchchildren=_flag(params, "fetchchildren"),
    )
    return query, options
