"""``$date`` operands: ISO-8601 text, epoch milliseconds or a dynamic moment, in UTC.

Every ``$date`` of a ``q`` becomes the canonical timestamp string of
:func:`docbase.core.ids.format_timestamp`, so stores compare dates as plain strings
(``docs/query.md``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from docbase.core.errors import InvalidQuery
from docbase.core.ids import format_timestamp
from docbase.core.query.ast import JSON

_DYNAMIC_DATES = ("$currentDate", "$currentMonth", "$currentYear", "$now")


def parse_date(value: JSON, now: datetime) -> str:
    """Turn a ``$date`` operand into the canonical UTC timestamp string.

    Accepts an ISO-8601 date or date-time (a date alone is midnight UTC, a time without
    offset is UTC), a number of milliseconds since the epoch, or one of the dynamic
    values ``$now``, ``$currentDate`` (today 00:00 UTC), ``$currentMonth`` (the first of
    this month) and ``$currentYear`` (1 January of this year).

    Raises:
        InvalidQuery: the value is none of these.

    """
    utc_now = now.astimezone(UTC)
    if isinstance(value, str) and value in _DYNAMIC_DATES:
        moment = {
            "$now": utc_now,
            "$currentDate": utc_now.replace(hour=0, minute=0, second=0, microsecond=0),
            "$currentMonth": utc_now.replace(day=1, hour=0, minute=0, second=0, microsecond=0),
            "$currentYear": utc_now.replace(month=1, day=1, hour=0, minute=0, second=0,
                                            microsecond=0),
        }[value]
        return format_timestamp(moment)
    if isinstance(value, bool):
        raise InvalidQuery(f"$date value {value!r} is not a date")
    if isinstance(value, int | float):
        try:
            return format_timestamp(datetime.fromtimestamp(value / 1000, UTC))
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidQuery(f"$date value {value!r} is out of range") from exc
    if not isinstance(value, str):
        raise InvalidQuery(f"$date value {value!r} is not a date")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z")
                                        else value)
    except ValueError as exc:
        raise InvalidQuery(f"$date value {value!r} is not an ISO-8601 date") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_timestamp(moment)
