"""The ``h`` hints parser: paging, order, fields and grouping over a :class:`Query`.

Hints override the URL parameters of a list read (``docs/query.md``). The small
readers of counts and sort directions here serve the URL parameters as well.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query.ast import JSON, Aggregate, Projection, Query, SortKey
from docbase.core.query.cursor import check_after, parse_cursor
from docbase.core.query.decoding import check_depth, split_path
from docbase.core.settings.limits import Limits


def parse_hints(h: JSON, base: Query | None = None, *, limits: Limits | None = None,
                checked: bool = False) -> Query:
    """Apply an ``h`` hints object over ``base`` (hints override URL parameters).

    Args:
        h: the decoded ``h`` object.
        base: the query the hints change (an empty :class:`Query` by default).
        limits: the database's limits; ``h`` may nest objects and arrays at most
            ``limits.max_query_depth`` levels deep.
        checked: ``h`` comes from :func:`~docbase.core.query.params.decode_json_param`,
            which walked it for depth and integer bounds already: it is not walked again.

    Raises:
        InvalidQuery: an unknown hint, a malformed value, ``h`` nested too deeply or a
            ``$after`` cursor made for another order than the resulting one.

    """
    query = base or Query()
    if not checked:
        check_depth(h, "h", limits)
    if not isinstance(h, dict):
        raise InvalidQuery("h must be a JSON object")
    changes: dict[str, Any] = {}
    for key, value in h.items():
        match key:
            case "$max":
                changes["limit"] = parse_count(value, "$max")
            case "$skip":
                changes["skip"] = parse_count(value, "$skip")
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
            case "$after":
                changes["after"] = parse_cursor(value, limits)
            case "$aggregate-grand-total":
                if not isinstance(value, bool):
                    raise InvalidQuery("$aggregate-grand-total needs true or false")
                changes["grand_total"] = value
            case _:
                raise InvalidQuery(f"unknown hint {key!r}")
    return check_after(msgspec.structs.replace(query, **changes))


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


MAX_COUNT = 2**53 - 1
"""The largest ``skip``/``max``/count a request may give: exact as a JSON number in any
client, and far inside every engine's 64-bit ``OFFSET``/``LIMIT``/``skip`` even when
an adapter adds one to the other."""


def parse_count(value: JSON, what: str) -> int:
    """Read a non-negative integer (``$max``, ``skip``, ...), also given as ASCII digits.

    Raises:
        InvalidQuery: ``value`` is not a non-negative integer or exceeds
            :data:`MAX_COUNT`; the message names ``what``.

    """
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        value = int(value)
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        raise InvalidQuery(f"{what} must be at most {MAX_COUNT}")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidQuery(f"{what} must be a non-negative integer")
    if value > MAX_COUNT:
        raise InvalidQuery(f"{what} must be at most {MAX_COUNT}")
    return value


def parse_direction(value: JSON, what: str) -> Literal[1, -1]:
    """Read a sort direction: ``1``, ``"1"`` or ``asc``; ``-1``, ``"-1"`` or ``desc``.

    Raises:
        InvalidQuery: any other value; the message names ``what``.

    """
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
    return tuple(SortKey(split_path(k, "$orderby"), parse_direction(v, f"$orderby {k!r}"))
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
