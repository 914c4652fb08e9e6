"""A parsed :class:`~docbase.core.query.Query` written back as the URL parameters of a list read.

The embedded ``read(query, options)`` takes the query AST; over HTTP a list read is
``q``, ``h`` and URL parameters (``docs/query.md``). :func:`list_params` writes the AST
back so that the server's parser (:func:`~docbase.core.query.parse_list_params`)
builds the same query: the filter by :func:`~docbase.core.query.unparse.filter_to_json`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query import After, And, Filter, Query, ReadOptions, Text
from docbase.core.query.ast import Path
from docbase.core.query.cursor import encode_cursor
from docbase.core.query.unparse import filter_to_json

__all__ = ["encode_filter", "list_params"]


def _dotted(path: Path) -> str:
    return ".".join(path)


def encode_filter(node: Filter) -> dict[str, Any]:
    """The ``q`` object :func:`~docbase.core.query.parse_filter` parses into ``node``.

    Raises:
        InvalidQuery: ``node`` has no ``q`` form (a text filter inside ``$or``, ...).

    """
    try:
        return filter_to_json(node)
    except ValueError as exc:
        raise InvalidQuery(str(exc)) from None


def _split_text(node: Filter) -> tuple[Filter, str | None]:
    if isinstance(node, Text):
        return And(()), node.text
    if isinstance(node, And):
        texts = [o for o in node.operands if isinstance(o, Text)]
        if len(texts) == 1:
            rest = tuple(o for o in node.operands if not isinstance(o, Text))
            return (rest[0] if len(rest) == 1 else And(rest)), texts[0].text
    return node, None


def _cursor(after: After) -> str:
    return encode_cursor(after.sort, after.values, after.id)


def list_params(query: Query, options: ReadOptions | None = None) -> dict[str, Any]:
    """The URL parameters of a list read of ``query`` with ``options``."""
    node, text = _split_text(query.filter)
    hints: dict[str, Any] = {"$skip": query.skip}
    if query.limit is not None:
        hints["$max"] = query.limit
    if query.sort:
        hints["$orderby"] = {_dotted(k.path): k.direction for k in query.sort}
    if query.projection is not None:
        flag = 1 if query.projection.include else 0
        hints["$fields"] = {_dotted(p): flag for p in query.projection.paths}
    if query.grand_total:
        hints["$aggregate-grand-total"] = True
    if query.after is not None:
        hints["$after"] = _cursor(query.after)
    params: dict[str, Any] = {"q": msgspec.json.encode(encode_filter(node)).decode(),
                              "h": msgspec.json.encode(hints).decode()}
    if text is not None:
        params["filter"] = text
    if query.groupby:
        params["groupby"] = [_dotted(g) for g in query.groupby]
    if query.aggregates:
        params["aggregate"] = [f"{a.func}:{a.field}" for a in query.aggregates]
    options = options or ReadOptions()
    for switch in ("totals", "count", "metafields", "fetchchildren"):
        if getattr(options, switch):
            params[switch] = "true"
    return params
