"""JSON from a client, decoded and bounded one way for request bodies, ``q`` and ``h``.

A client can send text that nests 100,000 levels deep, bytes that are not UTF-8, or
integers no engine can store (MongoDB's BSON and SQLite hold at most 64 bits; Python
would keep them exact and the engines would fail on them later). :func:`decode_untrusted`
turns every such decoding failure into :class:`~docbase.core.errors.InvalidQuery`, and
:func:`check_bounds` refuses a decoded value nesting deeper than a limit or holding an
integer outside the signed 64-bit range, so nothing of the kind reaches a store or the
query compilers. ``NaN``, ``Infinity`` and numbers beyond the float range are not
JSON: the decoder refuses them already.

A document (a request body, and every document or update value the library stores:
:mod:`docbase.core.pipeline.content`) is held to more: no NUL (U+0000) in a string,
since PostgreSQL's ``jsonb`` cannot store it anywhere, and only JSON values (``dict``
with ``str`` keys, ``list``, ``str``, ``int``, finite ``float``, ``bool``, ``None``),
since each engine would store anything else its own way or fail on it. Keys may hold
NUL, or start with ``$`` or hold ``.``: every engine stores them exactly
(:mod:`docbase.core.field_name_encoding`).
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def decode_untrusted(raw: bytes | str, what: str) -> Any:
    """Decode JSON text from a client, or raise :class:`InvalidQuery` naming ``what``.

    Raises:
        InvalidQuery: not valid JSON, not UTF-8, or nested past the decoder's recursion.

    """
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as exc:
        # msgspec recurses once per nesting level and decodes strings as UTF-8 strictly
        raise InvalidQuery(f"{what} is not valid JSON: {exc}") from exc


def check_bounds(value: Any, what: str, max_depth: int | None, *,
                 document: bool = False) -> None:
    """Refuse ``value`` nesting deeper than ``max_depth`` or holding a too large integer.

    The depth counts every object and array level (a scalar is 0). The walk goes level
    by level without recursion, so any value is measured, and it stops at the first
    level past ``max_depth``. ``None`` checks the integers only. A ``document`` may not
    hold NUL in a string, nor anything but JSON values.

    Raises:
        InvalidQuery: the value nests too deeply, holds an integer outside
            ``INT64_MIN..INT64_MAX``, a float that is not finite or (a ``document``) a
            NUL in a string, a key that is not a string or a value that is not JSON;
            the message names ``what``.

    """
    depth, level = 0, [value]
    while level:
        containers = []
        for node in level:
            kind = type(node)
            if kind is dict or kind is list:
                containers.append(node)
                if document and kind is dict and any(type(key) is not str for key in node):
                    raise InvalidQuery(f"{what} holds a key that is not a string")
            elif kind is str:
                if document and "\x00" in node:
                    raise InvalidQuery(f"{what} holds a string with a NUL character, which "
                                       "not every engine can store")
            elif kind is int:
                if not INT64_MIN <= node <= INT64_MAX:
                    raise InvalidQuery(f"{what} holds the integer {node}, outside the 64-bit "
                                       "range every engine stores; send it as a string")
            elif kind is float:
                if not math.isfinite(node):
                    raise InvalidQuery(f"{what} holds the number {node}, which JSON cannot "
                                       "express")
            elif kind is not bool and node is not None:
                if isinstance(node, dict | list):
                    containers.append(node)
                elif document:
                    raise InvalidQuery(f"{what} holds a {kind.__name__} ({node!r:.40}), "
                                       "which is not a JSON value")
        if not containers:
            return
        depth += 1
        if max_depth is not None and depth > max_depth:
            raise InvalidQuery(f"{what} is nested deeper than {max_depth} levels")
        level = [child for node in containers
                 for child in (node.values() if isinstance(node, dict) else node)]
