"""Cursors for keyset paging: the opaque text of ``$after`` and its :class:`After` node.

A cursor names the last document of a page by its place in the query's order: the
sort value of each sort key and its ``_id`` (``docs/query.md``, "Paging with a
cursor"). Its text is the base64url form (no padding) of a small JSON object::

    {"s": [[["price"], -1]], "v": [12.5], "i": "6650f0c2a1b2c3d4e5f60718"}

``s`` is the order it was made for (each key's path steps and direction), so that a
cursor given with another order is refused instead of skipping or repeating documents.
The text is not signed: a client that edits it only moves its own place in a list it
may read anyway (the read's scope and filter still apply). Anything that is not a
cursor made here is a clear :class:`~docbase.core.errors.InvalidQuery`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query.ast import JSON, After, Query, SortKey
from docbase.core.query.decoding import check_depth, parse_json
from docbase.core.settings.limits import Limits

MAX_CURSOR_CHARS: Final = 16 * 1024
"""The longest cursor text accepted (sort values of a few kilobytes fit)."""

_encode = msgspec.json.Encoder().encode
_BAD = "$after is not a cursor this server made (copy it from a previous page's answer)"


def encode_cursor(sort: Sequence[SortKey], values: Sequence[JSON], document_id: str) -> str:
    """Return the cursor text of a document with these sort ``values`` and ``_id``."""
    body = {"s": [[list(key.path), key.direction] for key in sort],
            "v": list(values), "i": document_id}
    return base64.urlsafe_b64encode(_encode(body)).rstrip(b"=").decode("ascii")


def parse_cursor(text: JSON, limits: Limits | None = None) -> After:
    """Decode a cursor text into an :class:`After` node (its order not yet checked).

    Raises:
        InvalidQuery: ``text`` is not a cursor text made by :func:`encode_cursor`.

    """
    if not isinstance(text, str) or not text or len(text) > MAX_CURSOR_CHARS:
        raise InvalidQuery(_BAD)
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8")
        body = parse_json(raw, "$after")
    except (binascii.Error, ValueError, InvalidQuery):
        raise InvalidQuery(_BAD) from None
    if not isinstance(body, dict) or set(body) != {"s", "v", "i"}:
        raise InvalidQuery(_BAD)
    check_depth(body, "$after", limits)
    sort, values, document_id = body["s"], body["v"], body["i"]
    if (not isinstance(sort, list) or not isinstance(values, list)
            or len(sort) != len(values) or not isinstance(document_id, str)):
        raise InvalidQuery(_BAD)
    return After(tuple(_sort_key(item) for item in sort), tuple(values), document_id)


def _sort_key(item: Any) -> SortKey:
    # the path is compared with the query's order, never used by itself
    if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], list)
            or not item[0] or not all(isinstance(step, str) for step in item[0])
            or item[1] not in (1, -1) or isinstance(item[1], bool)):
        raise InvalidQuery(_BAD)
    return SortKey(tuple(item[0]), item[1])


def describe_sort(sort: Sequence[SortKey]) -> str:
    """The order as a client writes it in ``$orderby`` (``{}``: ``_id`` ascending only)."""
    return _encode({".".join(key.path): key.direction for key in sort}).decode()


def check_after(query: Query) -> Query:
    """Return ``query`` when its cursor (if any) was made for its order.

    Raises:
        InvalidQuery: the cursor was made for another order.

    """
    after = query.after
    if after is not None and after.sort != query.sort:
        raise InvalidQuery(
            f"$after: this cursor pages the order {describe_sort(after.sort)}, but the "
            f"query sorts by {describe_sort(query.sort)}; give the same order as the "
            "page it came from, or start again without $after")
    return query
