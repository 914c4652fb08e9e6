"""The one place where pymongo's errors become docbase's.

Duplicate keys are :class:`~docbase.core.errors.Conflict`; values BSON cannot hold
(integers beyond 64 bits) are :class:`~docbase.core.errors.InvalidQuery`; a query
past its ``maxTimeMS``, or unanswered within the client-side timeout, is
:class:`~docbase.core.errors.QueryTimeout`; everything
else -- a lost connection, a timeout, a refused command -- is
:class:`~docbase.core.errors.BackendError` with the driver's error chained. pymongo
reconnects by itself, so the next call after a ``BackendError`` tries the server again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from bson.errors import InvalidDocument
from pymongo.errors import (
    BulkWriteError,
    ExecutionTimeout,
    NetworkTimeout,
    OperationFailure,
    PyMongoError,
)

from docbase.core.errors import BackendError, Conflict, InvalidQuery, QueryTimeout

DUPLICATE_KEY_CODES = frozenset({11000, 11001, 12582})


def is_duplicate_key(exc: PyMongoError) -> bool:
    """Tell whether ``exc`` reports a unique index (or ``_id``) violation."""
    if isinstance(exc, BulkWriteError):
        errors = exc.details.get("writeErrors", [])
        return any(error.get("code") in DUPLICATE_KEY_CODES for error in errors)
    return isinstance(exc, OperationFailure) and exc.code in DUPLICATE_KEY_CODES


@contextlib.contextmanager
def translated(action: str, *, query: bool = False) -> Iterator[None]:
    """Run a driver call, re-raising its errors as docbase errors about ``action``.

    A ``query`` that the server did not answer within the client-side timeout
    (``pymongo.timeout``) is a ``QueryTimeout`` as much as one the server stopped at
    ``maxTimeMS``: docbase cannot tell a server busy with this query from one stalled
    for another reason, and the query is what ran out of time.
    """
    try:
        yield
    except (InvalidDocument, OverflowError) as exc:
        raise InvalidQuery(f"cannot {action}: MongoDB cannot store a value: {exc}") from exc
    except ExecutionTimeout as exc:
        raise QueryTimeout(f"cannot {action}: the query took longer than "
                           "limits.query_timeout; narrow it down") from exc
    except NetworkTimeout as exc:
        if query and exc.timeout:
            raise QueryTimeout(f"cannot {action}: MongoDB did not answer the query within "
                               "limits.query_timeout; narrow it down") from exc
        raise BackendError(f"cannot {action}: MongoDB did not answer in time: {exc}") from exc
    except PyMongoError as exc:
        if is_duplicate_key(exc):
            raise Conflict(f"cannot {action}: a unique value is taken already") from exc
        raise BackendError(f"cannot {action}: MongoDB failed: {exc}") from exc
