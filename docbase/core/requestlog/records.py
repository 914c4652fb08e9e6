"""What the request log keeps: one document per request, one tally per minute and flush.

The log is two system collections of the database a request was for, written through
the :class:`~docbase.core.ports.DocumentStore` like every other system record, so every
adapter keeps it and every process of a server writes to and reads the same one:

- :data:`ENTRIES_COLLECTION`: one document per request: when (``at``, milliseconds since
  the epoch), the HTTP method, the route *template* (``/rest/{collection}/{id}``, never
  the path: ids and query strings, which may hold a key, stay out), the status, the
  duration in milliseconds, the kind of credential (:data:`CREDENTIAL_LABELS`) and the
  process id. Nothing else of the request is known to the log: no header, no body.
- :data:`MINUTES_COLLECTION`: per flush of a process, one tally per minute it saw
  requests in: how many, how many answered 4xx and 5xx, and a histogram of durations
  (:func:`latency_bucket`), from which the page reads the 99th percentile per minute.
  The charts then cost the page one grouped aggregate, whatever the traffic was.

Both are derived bookkeeping: not exported (``docs/portability.md``), pruned by the
writers (:mod:`.recorder`).
"""

from __future__ import annotations

import math
from typing import Any

ENTRIES_COLLECTION = "_requestlog"
"""The system collection of logged requests, newest kept up to the configured number."""
MINUTES_COLLECTION = "_requestlog_minutes"
"""The system collection of per-minute tallies behind the Logs page's charts."""
MINUTES_KEPT = 24 * 60
"""Minutes of tallies kept: the longest chart the page draws."""

CREDENTIAL_LABELS = {
    "key": "API key",
    "full-access key": "API key (full access)",
    "token": "JWT",
    "console": "console session",
    "none": "anonymous",
}
"""The kinds of credential a request can carry, as the Logs page names them."""

BUCKETS = 48
"""Histogram buckets of a minute's durations: a factor of √2 apart from 0.1 ms."""
_FIRST_MS = 0.1


def latency_bucket(milliseconds: float) -> int:
    """The histogram bucket of a duration: the first whose bound is not below it."""
    if milliseconds <= _FIRST_MS:
        return 0
    return min(BUCKETS - 1, math.ceil(2 * math.log2(milliseconds / _FIRST_MS)))


def bucket_bound(bucket: int) -> float:
    """The upper bound of ``bucket`` in milliseconds (what a percentile in it reads as)."""
    return _FIRST_MS * 2 ** (bucket / 2)


def bucket_field(bucket: int) -> str:
    """The tally's field counting the durations of ``bucket``."""
    return f"b{bucket:02d}"


def percentile(histogram: dict[int, int], fraction: float) -> float | None:
    """The bound of the bucket holding the ``fraction`` quantile (``None``: no request)."""
    total = sum(histogram.values())
    if total == 0:
        return None
    rank = math.ceil(fraction * total)
    seen = 0
    for bucket in sorted(histogram):
        seen += histogram[bucket]
        if seen >= rank:
            return bucket_bound(bucket)
    return bucket_bound(max(histogram))  # pragma: no cover - the loop always reaches rank


def credential_label(kind: Any) -> str:
    """The page's name of a stored credential kind (an unknown one as it is)."""
    return CREDENTIAL_LABELS.get(kind, str(kind))
