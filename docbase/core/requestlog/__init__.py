"""The request log behind the console's Logs page (``docs/console.md``).

Every process of a server records the requests it serves in memory and writes them in
batches, off the request path, to two system collections of the database each request
was for (:mod:`.recorder`); the page reads back what every process wrote
(:mod:`.reading`). What a logged request holds, and what it never holds (a path, a
query string, a header, a body), is in :mod:`.records`.
"""

from __future__ import annotations

from docbase.core.requestlog.reading import (
    LoggedRequest,
    MinuteFigures,
    logged_count,
    per_minute,
    recent_requests,
)
from docbase.core.requestlog.recorder import RequestLog
from docbase.core.requestlog.records import (
    CREDENTIAL_LABELS,
    ENTRIES_COLLECTION,
    MINUTES_COLLECTION,
)

__all__ = ["CREDENTIAL_LABELS", "ENTRIES_COLLECTION", "MINUTES_COLLECTION", "LoggedRequest",
           "MinuteFigures", "RequestLog", "logged_count", "per_minute", "recent_requests"]
