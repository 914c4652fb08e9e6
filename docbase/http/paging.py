"""The next page of a list read, told in response headers (``docs/http.md``).

A plain list answer is a JSON array, and existing clients read it as one, so the cursor
of the next page (:mod:`docbase.core.paging`) travels in headers: ``X-Next-Cursor``
holds the cursor itself and ``Link: <...>; rel="next"`` the URL of the next page. That
URL is the request's own, with the cursor as its ``after`` parameter and without the
offsets that brought this page (``skip``, and ``$skip``/``$after`` of ``h``), which the
cursor already accounts for.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote_plus

import msgspec
from litestar import Request

from docbase.core.query import decode_json_param

_DROPPED_PARAMS = frozenset({"after", "skip"})
_DROPPED_HINTS = frozenset({"$after", "$skip"})
_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")
"""Text that ``quote_plus`` leaves as it is (a cursor, a number, most names)."""


def _quoted(text: str) -> str:
    return text if _PLAIN.fullmatch(text) else quote_plus(text)


def next_page_url(request: Request[Any, Any, Any], params: dict[str, list[str]],
                  cursor: str) -> str:
    """The path and query of the page after this one, ``cursor`` given as ``after``."""
    kept = [(name, value) for name, values in params.items() if name not in _DROPPED_PARAMS
            for value in values if name != "h"]
    hints = decode_json_param(params, "h", None)  # parsed once already: valid JSON
    if isinstance(hints, dict):
        rest = {key: value for key, value in hints.items() if key not in _DROPPED_HINTS}
        if rest:
            kept.append(("h", msgspec.json.encode(rest).decode()))
    kept.append(("after", cursor))
    # what urlencode(kept) writes, without quoting what needs none; the path as Litestar's
    # URL has it (root path and path), without building the URL
    query = "&".join(f"{_quoted(name)}={_quoted(value)}" for name, value in kept)
    scope = request.scope
    return f"{scope.get('root_path', '')}{scope['path']}?{query}"


def next_page_headers(request: Request[Any, Any, Any], params: dict[str, list[str]],
                      cursor: str | None) -> dict[str, str]:
    """``Link`` and ``X-Next-Cursor`` headers for a page with a next one (else none)."""
    if cursor is None:
        return {}
    return {"link": f'<{next_page_url(request, params, cursor)}>; rel="next"',
            "x-next-cursor": cursor}
