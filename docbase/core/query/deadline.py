"""How long the store operation in progress may still run, for matching done in Python.

An adapter that evaluates queries in this process (the memory store, SQLite's
``REGEXP``, the Mongo adapter's residual filters) runs each operation inside
:func:`within` with its ``query_timeout``. :func:`~docbase.core.query.regex.regex_search`
then gives each value at most what is left of that time (and never more than its
per-value limit), so a ``$regex`` over many documents cannot take the number of documents times the
per-value limit: the whole operation is refused with
:class:`~docbase.core.errors.QueryTimeout` once its time is spent.

The deadline is a context variable: it follows the operation through ``await`` and
stays with the thread that sets it, so concurrent operations each have their own.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

from docbase.core.errors import QueryTimeout

_deadline: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "docbase_query_deadline", default=None)


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Run the block as one store operation allowed ``seconds`` (nested: the outer wins)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds the operation in progress may still run (``None``: no deadline is set).

    Raises:
        QueryTimeout: the operation's time is already spent.

    """
    current = _deadline.get()
    if current is None:
        return None
    deadline, seconds = current
    left = deadline - time.monotonic()
    if left <= 0:
        raise QueryTimeout(f"the query took longer than limits.query_timeout ({seconds} s); "
                           "narrow it down (a simpler $regex, an indexed field, fewer "
                           "documents)")
    return left
