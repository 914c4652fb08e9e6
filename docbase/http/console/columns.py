"""The columns of the collection browser: which fields, chosen how, and each cell's text.

By default the table shows the schema's fields, else the most frequent top-level fields
of the page. The **Columns** chooser of the page lists every field it knows (the
schema's, those seen on the page, and the system fields such as ``_created``); the
ticked ones travel as ``cols`` URL parameters (the script remembers them per
collection in the browser). A cell shows text as is, anything else as JSON, cut to
:data:`CELL_CHARACTERS`, with dates as ``2026-11-27 22:33 UTC`` and bidi or control
characters escaped.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import msgspec

from docbase.core.documents import SYSTEM_FIELDS
from docbase.http.console.rendering import visible

MAX_COLUMNS = 8
"""How many columns the table shows before any is chosen."""
CELL_CHARACTERS = 80
ISO_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?"
                          r"(Z|[+-]\d{2}:?\d{2})?")
"""A date and time as stored (ISO 8601), shown as date, hours and minutes, and zone."""


def readable(text: str) -> str:
    """An ISO 8601 date-time as ``YYYY-MM-DD HH:MM UTC`` (other text as it is)."""
    found = ISO_DATETIME.fullmatch(text)
    if found is None:
        return text
    date, time, zone = found.groups()
    return f"{date} {time}" + (" UTC" if zone == "Z" else f" {zone}" if zone else "")


def cell(value: Any) -> str:
    """A document value as the table shows it: text as is, anything else as JSON, cut.

    Dates read as dates; bidi and control characters are written as escapes.
    """
    raw = readable(value) if isinstance(value, str) else msgspec.json.encode(value).decode()
    shown = visible(raw)
    return shown if len(shown) <= CELL_CHARACTERS else shown[:CELL_CHARACTERS - 1] + "…"


def default_columns(schema_fields: list[str], documents: list[dict[str, Any]]) -> list[str]:
    """The schema's fields, else the most frequent top-level fields of the page."""
    if schema_fields:
        return schema_fields[:MAX_COLUMNS]
    counted = Counter(k for d in documents for k in d if not k.startswith("_"))
    return [name for name, _ in counted.most_common(MAX_COLUMNS)]


def known_fields(schema_fields: list[str], documents: list[dict[str, Any]]) -> list[str]:
    """Every field the chooser offers: the schema's, the page's, then the system fields."""
    seen = dict.fromkeys(schema_fields)
    seen.update(dict.fromkeys(k for d in documents for k in d if not k.startswith("_")))
    seen.update(dict.fromkeys(sorted(k for d in documents for k in d
                                     if k.startswith("_") and k != "_id")))
    seen.update(dict.fromkeys(f for f in sorted(SYSTEM_FIELDS) if f != "_id"))
    return list(seen)


def shown_columns(chosen: list[str], schema_fields: list[str],
                  documents: list[dict[str, Any]]) -> list[str]:
    """The ``cols`` the page was asked with, else :func:`default_columns`."""
    picked = [c.strip() for c in chosen if c.strip() and c.strip() != "_id"]
    return list(dict.fromkeys(picked)) or default_columns(schema_fields, documents)
