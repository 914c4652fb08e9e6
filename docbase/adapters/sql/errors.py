"""Driver errors translated into docbase's errors, in this one place.

=====================================  ===========================================
driver error                           docbase error
=====================================  ===========================================
integrity (duplicate key, unique)      :class:`~docbase.core.errors.Conflict`
PostgreSQL data exception (class 22):  :class:`~docbase.core.errors.InvalidQuery`
U+0000 in text, bad regex, overflow
SQLite: a user function raised        :class:`~docbase.core.errors.RegexTimeout` (only
                                       ``REGEXP`` raises: past its time limit)
PostgreSQL ``statement_timeout``       :class:`~docbase.core.errors.QueryTimeout`
(57014), SQLite "interrupted" (the
progress handler of
``connection_settings``)
PostgreSQL ``lock_timeout`` (55P03):   :class:`~docbase.core.errors.BackendError`
a row or table another transaction     (503 with ``Retry-After``: contention is no
holds; SQLite "database is locked"     bad request; ``lock_wait`` of
                                       ``connection_settings``)
a collection table dropped elsewhere   :class:`MissingTable` (the caller retries)
anything else, lost connections too    :class:`~docbase.core.errors.BackendError`
=====================================  ===========================================

A connection that failed is invalidated by SQLAlchemy (and pools ping before use), so
the next call gets a fresh one. SQLite statements sent to the driver directly
(:mod:`.driver_updates`) raise ``sqlite3`` errors of their own, translated the same way.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from sqlalchemy import exc as sa_exc

from docbase.core.errors import (
    BackendError,
    Conflict,
    DocbaseError,
    InvalidQuery,
    QueryTimeout,
    RegexTimeout,
)


class MissingTable(BackendError):
    """A cached collection table no longer exists (dropped by another process)."""


def _sqlstate(error: sa_exc.DBAPIError) -> str:
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return code if isinstance(code, str) else ""


def translated(state: str, message: str) -> DocbaseError:
    """The docbase error for a driver error of SQLSTATE ``state`` (``""``: none) and text."""
    if state.startswith("23"):
        return Conflict(f"the write conflicts with stored data: {message}")
    if state.startswith("22"):
        return InvalidQuery(f"the database refused a value: {message}")
    if "user-defined function raised exception" in message:
        return RegexTimeout("a $regex took longer than its time limit (on one value, "
                            "or limits.query_timeout on all of them); it backtracks "
                            "too much: simplify the pattern")
    if state == "55P03":
        return BackendError("the data is locked by another transaction for longer "
                            "than the lock wait (limits.query_timeout / 2); try again "
                            "shortly")
    if state == "57014" or message == "interrupted":
        return QueryTimeout("the query took longer than limits.query_timeout; narrow "
                            "it down (a simpler $regex, an indexed field)")
    if state == "42P01" or "no such table" in message:
        return MissingTable(f"a collection table is gone: {message}")
    return BackendError(f"database error: {message}")


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise driver and connection errors as docbase errors (``from`` the cause)."""
    try:
        yield
    except DocbaseError:
        raise
    except sa_exc.IntegrityError as exc:
        raise translated("23000", str(exc.orig)) from exc
    except sa_exc.DBAPIError as exc:
        raise translated(_sqlstate(exc), str(exc.orig)) from exc
    except sqlite3.IntegrityError as exc:  # past SQLAlchemy, on the driver
        raise translated("23000", str(exc)) from exc
    except sqlite3.Error as exc:
        raise translated("", str(exc)) from exc
    except (sa_exc.SQLAlchemyError, OSError, TimeoutError) as exc:
        raise BackendError(f"database unavailable: {exc}") from exc
