"""The functions the adapter registers on every SQLite connection.

SQLite has no procedural language, so the few things plain SQL cannot say are Python
functions, registered as deterministic so that expression indexes may use them: order
keys of objects and arrays (:func:`.keys.encode_key`), members whose names SQLite's JSON
path syntax cannot quote, walking a path through arrays (``docbase.core.evaluate``
itself), and ``$regex`` with Python's ``re``. Each takes and returns JSON text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from docbase.adapters.sql.order_keys import encode_key
from docbase.core import evaluate
from docbase.core.query import JSON
from docbase.core.query.regex import regex_search

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _key(text: str | None) -> bytes | None:
    return None if text is None else encode_key(_decode(text)).encode()


def _member(text: str | None, step: str) -> str | None:
    if text is None:
        return None
    value = _decode(text)
    if isinstance(value, dict) and step in value:
        return _encode(value[step]).decode()
    return None


def _sort_items(value: JSON, path: tuple[str, ...]) -> list[JSON]:
    return [item for found in evaluate.path_values(value, path)
            for item in (found if isinstance(found, list) else [found])]


def _walker(walk: Callable[[JSON, tuple[str, ...]], list[JSON]]) -> Callable[..., str]:
    def function(text: str | None, path: str) -> str:
        if text is None:
            return "[]"
        return _encode(walk(_decode(text), tuple(_decode(path)))).decode()
    return function


def _regexp(pattern: str, options: str, value: Any) -> int | None:
    # a RegexTimeout raised here reaches the caller as "user-defined function raised
    # exception"; errors.py turns that back into a RegexTimeout
    if not isinstance(value, str):
        return None
    return int(regex_search(pattern, options, value))


def _float_repr(value: float | None) -> str | None:
    # SQLite prints doubles with 15 digits; repr gives back the very same double
    return None if value is None else repr(float(value))


FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "docbase_key": (1, _key),
    "docbase_member": (2, _member),
    "docbase_path_values": (2, _walker(evaluate.path_values)),
    "docbase_reached": (2, _walker(evaluate.reached_values)),
    "docbase_sort_items": (2, _walker(_sort_items)),
    "docbase_regexp": (3, _regexp),
    "docbase_float_repr": (1, _float_repr),
}


def register(connection: Any) -> None:
    """Register every function on a DB-API SQLite connection."""
    for name, (arity, function) in FUNCTIONS.items():
        connection.create_function(name, arity, function, deterministic=True)
