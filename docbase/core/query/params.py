"""URL parameters of a list read, and the one reader of true/false URL flags.

``q`` and ``h`` are decoded once here and checked against the database's
``limits.max_query_depth`` before anything is parsed, so the HTTP layer and the
embedded library refuse the same requests with the same messages (``docs/http.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query.ast import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    And,
    Filter,
    Query,
    ReadOptions,
    SortKey,
    Text,
)
from docbase.core.query.cursor import check_after, parse_cursor
from docbase.core.query.decoding import check_depth, parse_json, split_path
from docbase.core.query.filters import parse_filter
from docbase.core.query.hints import parse_aggregate, parse_count, parse_direction, parse_hints
from docbase.core.settings.limits import Limits

URLParams = Mapping[str, Sequence[str]]
"""Every URL parameter name with all the values it was given, in order."""

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no", ""})


def last_param(params: URLParams, name: str) -> str | None:
    """The last value of a URL parameter (the one that counts), or ``None`` without one."""
    values = params.get(name)
    return values[-1] if values else None


def parse_flag(params: URLParams, name: str, default: bool = False) -> bool:
    """Read a true/false URL parameter (``true``/``1``/``yes``, ``false``/``0``/``no``).

    The last value given counts; without the parameter the answer is ``default``.

    Raises:
        InvalidQuery: the value is neither true nor false.

    """
    values = params.get(name)
    if not values:
        return default
    value = values[-1].lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidQuery(f"parameter {name!r} must be true or false, not {values[-1]!r}")


def decode_json_param(params: URLParams, name: str, limits: Limits | None) -> JSON | None:
    """Decode the last value of a JSON parameter and check its nesting depth.

    Returns ``None`` when the parameter is missing or blank.

    Raises:
        InvalidQuery: the value is not valid JSON, or nests deeper than
            ``limits.max_query_depth``.

    """
    values = params.get(name)
    if not values or not values[-1].strip():
        return None
    value = parse_json(values[-1], name)
    check_depth(value, name, limits)
    return value


def unquoted(name: str) -> str:
    """A ``sort`` field name without the JSON quotes some clients put around it.

    ``?sort="age"`` sorts by ``age``, as the original's front end reads it.
    """
    if len(name) >= 2 and name[0] == name[-1] == '"':
        try:
            decoded = msgspec.json.decode(name)
        except msgspec.DecodeError:
            return name
        if isinstance(decoded, str):
            return decoded
    return name


def parse_list_params(
    params: URLParams, *, now: datetime | None = None, limits: Limits | None = None
) -> tuple[Query, ReadOptions]:
    """Parse the URL parameters of a list read (``q``, ``h``, ``filter``, ``sort``, ...).

    ``params`` maps each parameter name to every value it was given, in order.
    Parameters that are not about reading (``apikey``, ``jwt``, ...) are ignored.
    ``q`` and ``h`` are decoded once each; ``after`` (or ``h``'s ``$after``) is a
    cursor, checked against the order the parameters and hints end with. Without
    ``max`` or ``$max`` a read returns the default 1000 documents, or
    ``limits.max_page`` when that is lower.

    Raises:
        InvalidQuery: a malformed parameter, naming it, or a ``q``/``h`` nested deeper
            than ``limits.max_query_depth``.

    """
    q = decode_json_param(params, "q", limits)
    h = decode_json_param(params, "h", limits)
    conditions: list[Filter] = []
    if q is not None:
        parsed = parse_filter(q, now=now, checked=True)  # walked for bounds above
        if parsed != MATCH_ALL:
            conditions.append(parsed)
    text = last_param(params, "filter")
    if text:
        conditions.append(Text(text))
    sorts = params.get("sort") or []
    dirs = params.get("dir") or []
    if len(dirs) > len(sorts):
        raise InvalidQuery("more dir parameters than sort parameters")
    sort = tuple(
        SortKey(split_path(unquoted(name), "sort"),
                parse_direction(dirs[i] if i < len(dirs) else 1, "dir"))
        for i, name in enumerate(sorts)
    )
    skip_text, max_text = last_param(params, "skip"), last_param(params, "max")
    after_text = last_param(params, "after")
    query = Query(
        filter=conditions[0] if len(conditions) == 1 else And(tuple(conditions)),
        sort=sort,
        skip=parse_count(skip_text, "skip") if skip_text is not None else 0,
        limit=parse_count(max_text, "max") if max_text is not None else DEFAULT_MAX,
        groupby=tuple(split_path(g, "groupby") for g in params.get("groupby") or []),
        aggregates=tuple(parse_aggregate(a) for a in params.get("aggregate") or []),
        after=parse_cursor(after_text, limits) if after_text else None,
    )
    query = parse_hints(h, query, checked=True) if h is not None else check_after(query)
    asked = "max" in params or (isinstance(h, dict) and "$max" in h)
    if limits is not None and not asked and query.limit is not None \
            and query.limit > limits.max_page:
        query = msgspec.structs.replace(query, limit=limits.max_page)
    options = ReadOptions(
        totals=parse_flag(params, "totals"),
        count=parse_flag(params, "count"),
        metafields=parse_flag(params, "metafields"),
        fetchchildren=parse_flag(params, "fetchchildren"),
    )
    return query, options
