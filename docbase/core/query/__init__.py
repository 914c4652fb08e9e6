"""The query language: a typed AST and the one parser from JSON/URL input to it.

``q`` (a JSON query object), ``h`` (a JSON hints object) and the URL parameters of a
list request are parsed here, once, into :class:`Query`. Adapters compile the AST;
none of them ever sees raw JSON queries. Anything malformed or unsupported raises
:class:`~docbase.core.errors.InvalidQuery` naming the offending part. ``docs/query.md``
says what each node means; :mod:`docbase.core.evaluate` is its executable form.

The package is split by concern: :mod:`.ast` (the nodes, :class:`Query`,
:class:`ReadOptions`), :mod:`.decoding` (JSON text, dot paths, nesting depth),
:mod:`.filters` (``q``), :mod:`.regex` (``$regex``), :mod:`.dates` (``$date``),
:mod:`.hints` (``h``), :mod:`.cursor` (``$after``) and :mod:`.params` (URL parameters
and true/false flags).
Every name is importable from ``docbase.core.query`` itself.
"""

from __future__ import annotations

from docbase.core.query.ast import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    After,
    Aggregate,
    AggregateFunc,
    AggregateRow,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    FieldFilter,
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
    Projection,
    Query,
    ReadOptions,
    Regex,
    SortKey,
    Text,
)
from docbase.core.query.cursor import check_after, encode_cursor, parse_cursor
from docbase.core.query.dates import parse_date
from docbase.core.query.decoding import check_depth, json_depth, parse_json, split_path
from docbase.core.query.filters import MAX_DEPTH, parse_filter
from docbase.core.query.hints import parse_aggregate, parse_count, parse_direction, parse_hints
from docbase.core.query.params import (
    URLParams,
    decode_json_param,
    last_param,
    parse_flag,
    parse_list_params,
)
from docbase.core.query.regex import parse_regex, regex_flags

__all__ = [
    "DEFAULT_MAX",
    "JSON",
    "MATCH_ALL",
    "MAX_DEPTH",
    "After",
    "Aggregate",
    "AggregateFunc",
    "AggregateRow",
    "And",
    "Between",
    "ElemMatch",
    "Eq",
    "Exists",
    "FieldFilter",
    "Filter",
    "Gt",
    "Gte",
    "In",
    "Lt",
    "Lte",
    "Ne",
    "Nin",
    "Not",
    "Or",
    "Path",
    "Projection",
    "Query",
    "ReadOptions",
    "Regex",
    "SortKey",
    "Text",
    "URLParams",
    "check_after",
    "check_depth",
    "decode_json_param",
    "encode_cursor",
    "json_depth",
    "last_param",
    "parse_aggregate",
    "parse_count",
    "parse_cursor",
    "parse_date",
    "parse_direction",
    "parse_filter",
    "parse_flag",
    "parse_hints",
    "parse_json",
    "parse_list_params",
    "parse_regex",
    "regex_flags",
    "split_path",
]
