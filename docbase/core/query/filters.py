"""The ``q`` parser: a JSON query object into a :class:`~docbase.core.query.ast.Filter`.

Anything malformed or unsupported raises :class:`InvalidQuery` naming the offending
part (``docs/query.md`` lists the operators). Two bounds keep a hostile ``q`` cheap:
the database's ``limits.max_query_depth`` on the JSON nesting of the whole object, and
:data:`MAX_DEPTH` levels of ``$and``/``$or``/``$elemMatch``/``$not``, which holds even
when no limits are given.
"""

from __future__ import annotations

from datetime import UTC, datetime

from docbase.core.errors import InvalidQuery
from docbase.core.query.ast import (
    JSON,
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
)
from docbase.core.query.dates import parse_date
from docbase.core.query.decoding import check_depth, split_path
from docbase.core.query.regex import parse_regex
from docbase.core.settings.limits import Limits

_FIELD_OPERATORS = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$bt", "$in", "$nin", "$regex",
     "$options", "$exists", "$not", "$elemMatch"}
)
MAX_DEPTH = 32
"""Most levels of ``$and``/``$or``/``$elemMatch``/``$not`` a ``q`` may nest, whatever the limits."""


def parse_filter(q: JSON, *, now: datetime | None = None, limits: Limits | None = None,
                 checked: bool = False) -> Filter:
    """Parse a ``q`` object into a :class:`Filter`.

    Args:
        q: the decoded ``q`` object.
        now: the moment dynamic ``$date`` values refer to (the current time by default).
        limits: the database's limits; ``q`` may nest objects and arrays at most
            ``limits.max_query_depth`` levels deep. Without them only :data:`MAX_DEPTH`
            bounds the nesting.
        checked: ``q`` comes from :func:`~docbase.core.query.params.decode_json_param`,
            which walked it for depth and integer bounds already: it is not walked again.

    Raises:
        InvalidQuery: ``q`` is not an object, nests too deeply, or holds an unknown
            operator or bad operand.

    """
    if not checked:
        check_depth(q, "q", limits)
    if not isinstance(q, dict):
        raise InvalidQuery("q must be a JSON object")
    return _FilterParser(now or datetime.now(UTC)).document(q, (), depth=0)


_COMPARISONS: dict[str, type[Eq | Ne | Gt | Gte | Lt | Lte]] = {
    "$eq": Eq, "$ne": Ne, "$gt": Gt, "$gte": Gte, "$lt": Lt, "$lte": Lte,
}
"""The operators that compare a path with one value, and the node each one becomes."""


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
                case "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte":
                    conds.append(_COMPARISONS[op](path, self.value(operand, path)))
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
                    conds.append(parse_regex(path, operand, ops.get("$options", "")))
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
