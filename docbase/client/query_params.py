"""A parsed :class:`~docbase.core.query.Query` written back as the URL parameters of a list read.

The embedded ``read(query, options)`` takes the query AST; over HTTP a list read is
``q``, ``h`` and URL parameters (``docs/query.md``). :func:`list_params` writes the AST
back so that the server's parser (:func:`~docbase.core.query.parse_list_params`)
builds the same query: each filter node as the operator it was parsed from.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query import (
    After,
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
    Query,
    ReadOptions,
    Regex,
    Text,
)
from docbase.core.query.ast import Path
from docbase.core.query.cursor import encode_cursor

__all__ = ["encode_filter", "list_params"]

_COMPARISONS: dict[type[Any], str] = {Eq: "$eq", Ne: "$ne", Gt: "$gt", Gte: "$gte",
                                      Lt: "$lt", Lte: "$lte"}


def _dotted(path: Path) -> str:
    return ".".join(path)


def _path(node: Filter) -> Path:
    """The path a field condition (or an ``And`` of conditions on one path) is on."""
    if isinstance(node, And) and node.operands:
        return _path(node.operands[0])
    path = getattr(node, "path", None)
    if path is None:
        raise InvalidQuery(f"cannot write {type(node).__name__} as a field condition")
    return tuple(path)


def _operators(node: Filter) -> dict[str, Any]:
    """The operator object of a condition on one path (``{"$gt": 1, "$lt": 5}``)."""
    match node:
        case Eq() | Ne() | Gt() | Gte() | Lt() | Lte():
            return {_COMPARISONS[type(node)]: node.value}
        case Between():
            return {"$bt": [node.low, node.high]}
        case In():
            return {"$in": list(node.values)}
        case Nin():
            return {"$nin": list(node.values)}
        case Regex():
            return {"$regex": node.pattern, **({"$options": node.options} if node.options
                                               else {})}
        case Exists():
            return {"$exists": node.present}
        case Not():
            return {"$not": _operators(node.operand)}
        case ElemMatch():
            inner = encode_filter(node.query) if node.objects else _operators(node.query)
            return {"$elemMatch": inner}
        case And():
            merged: dict[str, Any] = {}
            for operand in node.operands:
                ops = _operators(operand)
                if set(ops) & set(merged):
                    raise InvalidQuery("cannot write one operator twice on one path")
                merged.update(ops)
            return merged
    raise InvalidQuery(f"cannot write {type(node).__name__} as an operator")


def encode_filter(node: Filter) -> dict[str, Any]:
    """The ``q`` object :func:`~docbase.core.query.parse_filter` parses into ``node``."""
    match node:
        case And():
            if not node.operands:
                return {}
            return {"$and": [encode_filter(o) for o in node.operands]}
        case Or():
            return {"$or": [encode_filter(o) for o in node.operands]}
        case Text():
            raise InvalidQuery("a text filter is the filter parameter, not part of q")
    return {_dotted(_path(node)): _operators(node)}


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
