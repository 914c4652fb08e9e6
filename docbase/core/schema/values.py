"""Checking and normalising one value of a typed field.

:func:`coerce` returns the value as it is stored or raises :class:`BadValue` with the
messages a ``422`` lists for the field. Strings are accepted where a form-encoded body
can only send strings (``"42"`` for a number, ``"true"``/``"on"`` for a bool, a
comma-separated list for tags), and an empty string counts as no value for every type
but text and textarea. Dates and date-times are stored as ``YYYY-MM-DDTHH:MM:SS.sssZ``
(UTC), times as ``HH:MM:SS``. Checks that need the store (lookups resolved, media ids
that exist) and password hashing are :mod:`docbase.core.schema.validation`'s.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from docbase.core.errors import InvalidQuery, RegexTimeout
from docbase.core.ids import format_timestamp, is_object_id
from docbase.core.mail.requests import check_address
from docbase.core.query.dates import parse_date
from docbase.core.query.regex import regex_search
from docbase.core.schema.model import ARRAY_TYPES, NUMBER_TYPES, STRING_TYPES, FieldSpec
from docbase.core.schema.model import FieldType as T

_TEXT = frozenset({T.TEXT, T.TEXTAREA})
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
_URL_SCHEMES = frozenset({"http", "https", "ftp", "ftps", "mailto"})
MAX_NUMBER = 2.0 ** 53
"""Largest magnitude of a number field (JSON numbers beyond it lose precision)."""


class BadValue(Exception):
    """A value does not fit its field; ``messages`` say why."""

    def __init__(self, *messages: str) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def is_empty(value: Any) -> bool:
    """Tell whether ``value`` counts as no value (``None``, ``""`` or ``[]``)."""
    return value is None or value in ("", [])


def coerce(spec: FieldSpec, value: Any) -> Any:
    """Return ``value`` as field ``spec`` stores it.

    ``None`` (and, except for text and textarea, ``""``) is returned as ``None``: no value.

    Raises:
        BadValue: the value does not fit the field's type or constraints.

    """
    kind = spec.type
    if value is None or (value == "" and kind not in _TEXT):
        return None
    converted = _CONVERTERS[kind](spec, value)
    _check_bounds(spec, converted)
    return converted


def _check_bounds(spec: FieldSpec, value: Any) -> None:
    kind = spec.type
    if kind in NUMBER_TYPES:
        measure, unit = value, ""
    elif kind in STRING_TYPES:
        measure, unit = len(value), " characters"
    elif kind in ARRAY_TYPES:
        measure, unit = len(value), " elements"
    else:
        return
    problems = []
    if spec.min is not None and measure < spec.min:
        problems.append(f"must be at least {_number_text(spec.min)}{unit}"
                        if unit else f"must be at least {_number_text(spec.min)}")
    if spec.max is not None and measure > spec.max:
        problems.append(f"must be at most {_number_text(spec.max)}{unit}")
    if spec.pattern is not None and isinstance(value, str):
        try:
            if not regex_search(spec.pattern, "", value):
                problems.append(f"does not match the pattern {spec.pattern}")
        except RegexTimeout:
            problems.append(f"takes too long to match the pattern {spec.pattern}")
    if problems:
        raise BadValue(*problems)


def _number_text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _string(spec: FieldSpec, value: Any) -> str:
    if not isinstance(value, str):
        raise BadValue("must be a string")
    return value


def _number(spec: FieldSpec, value: Any) -> int | float:
    if isinstance(value, str):
        try:
            value = float(value.strip()) if value.strip() else None
        except ValueError:
            raise BadValue("must be a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadValue("must be a number")
    if abs(value) > MAX_NUMBER:
        raise BadValue("must be between -2^53 and 2^53")
    return value


def _integer(spec: FieldSpec, value: Any) -> int:
    number = _number(spec, value)
    if not float(number).is_integer():
        raise BadValue("must be a whole number")
    return int(number)


def _float(spec: FieldSpec, value: Any) -> float:
    return float(_number(spec, value))


def _money(spec: FieldSpec, value: Any) -> int | float:
    number = _number(spec, value)
    try:
        exponent = Decimal(str(number)).normalize().as_tuple().exponent
    except InvalidOperation:  # pragma: no cover - finite numbers always convert
        raise BadValue("must be an amount of money") from None
    if isinstance(exponent, int) and exponent < -2:
        raise BadValue("must have at most 2 decimal places")
    return int(number) if float(number).is_integer() else number


def _bool(spec: FieldSpec, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise BadValue("must be true or false")


def _datetime(spec: FieldSpec, value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"$date"}:
        value = value["$date"]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise BadValue("must be a date (ISO 8601 text or milliseconds since 1970)")
    try:
        return parse_date(value, datetime.now(UTC))
    except InvalidQuery:
        raise BadValue("must be a date (ISO 8601 text or milliseconds since 1970)") from None


def _date(spec: FieldSpec, value: Any) -> str:
    text = value.strip() if isinstance(value, str) else None
    if text is not None and len(text) >= 10 and text[4:5] == "-" and text[7:8] == "-":
        try:  # the calendar day as written, whatever the time and offset after it
            day = datetime.strptime(text[:10], "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise BadValue("must be a date (YYYY-MM-DD)") from None
        _datetime(spec, text)  # the rest must still be a valid date-time
        return format_timestamp(day)
    moment = _datetime(spec, value)
    return moment[:10] + "T00:00:00.000Z"


def _time(spec: FieldSpec, value: Any) -> str:
    if not isinstance(value, str):
        raise BadValue("must be a time of day (HH:MM or HH:MM:SS)")
    try:
        moment = time.fromisoformat(value.strip())
    except ValueError:
        raise BadValue("must be a time of day (HH:MM or HH:MM:SS)") from None
    if moment.tzinfo is not None:
        raise BadValue("must be a time of day without an offset")
    return moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")


def _email(spec: FieldSpec, value: Any) -> str:
    text = _string(spec, value).strip()
    try:
        return check_address(text)
    except ValueError:
        raise BadValue("must be a valid email address") from None


def _url(spec: FieldSpec, value: Any) -> str:
    text = _string(spec, value).strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        raise BadValue("must be a valid URL") from None
    if parts.scheme.lower() not in _URL_SCHEMES or any(c.isspace() for c in text) or (
            parts.scheme.lower() != "mailto" and not parts.hostname):
        raise BadValue("must be a valid URL (http, https, ftp or mailto)")
    return text


def _json(spec: FieldSpec, value: Any) -> Any:
    return value


def _option(spec: FieldSpec, value: Any) -> str:
    options = spec.options or ()
    if not isinstance(value, str) or value not in options:
        raise BadValue(f"must be one of: {', '.join(options)}")
    return value


def _tags(spec: FieldSpec, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [tag.strip() for tag in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise BadValue("must be an array of strings (or one comma-separated string)")
    return [tag for tag in value if tag]


def _media(spec: FieldSpec, value: Any) -> list[str]:
    ids = [value] if isinstance(value, str) else value
    if not isinstance(ids, list) or not all(is_object_id(i) for i in ids):
        raise BadValue("must be an array of media ids")
    return [i.lower() for i in ids]


def _lookup(spec: FieldSpec, value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    result = []
    for item in items:
        target = item.get("_id") if isinstance(item, dict) else item
        if not isinstance(target, str) or not is_object_id(target):
            raise BadValue("must be an array of ids or of objects with an _id")
        result.append({"_id": target.lower()})
    return result


def child_message(spec: FieldSpec) -> str:
    """Why a document body may not carry a child field."""
    return (f"is a subcollection: create its documents with POST "
            f"/rest/<collection>/<id>/{spec.name}")


def _child(spec: FieldSpec, value: Any) -> Any:
    raise BadValue(child_message(spec))


_CONVERTERS = {
    T.TEXT: _string, T.TEXTAREA: _string, T.PASSWORD: _string,
    T.NUMBER: _integer, T.FLOAT_NUMBER: _float, T.MONEY: _money, T.BOOL: _bool,
    T.DATE: _date, T.DATETIME: _datetime, T.TIME: _time, T.EMAIL: _email, T.URL: _url,
    T.JSON: _json, T.OPTION: _option, T.TAGS: _tags, T.IMAGE: _media, T.FILE: _media,
    T.LOOKUP: _lookup, T.CHILD: _child,
}
