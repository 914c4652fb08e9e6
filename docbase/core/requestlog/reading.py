"""Reading the request log back: a page of the newest requests, and figures per minute.

Both read what every process of the server wrote (:mod:`.records`): the entries
newest first, paged, and the minute tallies added up per minute by the store
(one grouped aggregate, pushed down to SQL or MongoDB), with the 99th percentile of
each minute's durations read from the summed histogram.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.query import MATCH_ALL, Aggregate, Gte, Query
from docbase.core.requestlog.recorder import NEWEST_FIRST
from docbase.core.requestlog.records import (
    BUCKETS,
    ENTRIES_COLLECTION,
    MINUTES_COLLECTION,
    bucket_field,
    credential_label,
    percentile,
)

if TYPE_CHECKING:
    from docbase.core.ports import DocumentStore

_SUMS = (Aggregate("SUM", "n"), Aggregate("SUM", "e4"), Aggregate("SUM", "e5"),
         Aggregate("SUM", "unlisted"), *(Aggregate("SUM", bucket_field(b)) for b in range(BUCKETS)))


class LoggedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request as the Logs page lists it."""

    at: datetime
    method: str
    route: str
    status: int
    milliseconds: float
    credential: str
    """The kind of credential, named for people (``API key``, ``JWT``, ...)."""
    pid: int


class MinuteFigures(msgspec.Struct, frozen=True, kw_only=True):
    """What the requests of one minute (of every process) add up to."""

    minute: int
    """Minutes since the epoch."""
    requests: int = 0
    client_errors: int = 0
    """Answers 400 to 499."""
    server_errors: int = 0
    """Answers 500 and above."""
    unlisted: int = 0
    """Requests counted here but not listed as entries (beyond the rate listed)."""
    p99_ms: float | None = None
    """The 99th percentile of the durations, as the bound of its histogram bucket."""


async def recent_requests(store: DocumentStore, *, skip: int = 0, limit: int = 50,
                          ) -> list[LoggedRequest]:
    """The logged requests, newest first, ``limit`` of them after the first ``skip``."""
    found = await store.find(ENTRIES_COLLECTION, Query(sort=NEWEST_FIRST, skip=skip,
                                                       limit=limit))
    return [_logged(document) for document in found]


def _logged(document: dict[str, Any]) -> LoggedRequest:
    return LoggedRequest(
        at=datetime.fromtimestamp(document.get("at", 0) / 1000, UTC),
        method=str(document.get("method", "")), route=str(document.get("route", "")),
        status=int(document.get("status", 0)), milliseconds=float(document.get("ms", 0)),
        credential=credential_label(document.get("credential", "none")),
        pid=int(document.get("pid", 0)))


async def per_minute(store: DocumentStore, minutes: int, *, now: float | None = None,
                     ) -> list[MinuteFigures]:
    """Every one of the last ``minutes`` minutes (the current one last), quiet ones as 0."""
    last = int((time.time() if now is None else now) // 60)
    first = last - minutes + 1
    rows = await store.aggregate(MINUTES_COLLECTION, Gte(("minute",), first),
                                 (("minute",),), _SUMS)
    figures: dict[int, MinuteFigures] = {}
    for row in rows:
        minute = row.key[0] if row.key else None
        if not isinstance(minute, int) or not first <= minute <= last:
            continue
        values = row.values
        histogram = {b: int(values.get(a.key) or 0) for b, a in enumerate(_SUMS[4:])}
        figures[minute] = MinuteFigures(
            minute=minute, requests=int(values.get(_SUMS[0].key) or 0),
            client_errors=int(values.get(_SUMS[1].key) or 0),
            server_errors=int(values.get(_SUMS[2].key) or 0),
            unlisted=int(values.get(_SUMS[3].key) or 0),
            p99_ms=percentile(histogram, 0.99))
    return [figures.get(m) or MinuteFigures(minute=m) for m in range(first, last + 1)]


async def logged_count(store: DocumentStore) -> int:
    """How many requests the log holds now."""
    return await store.count(ENTRIES_COLLECTION, MATCH_ALL)
