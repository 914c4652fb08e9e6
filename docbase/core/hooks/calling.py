"""Calling a user's hook or job: within its time limit, its failures named and recorded.

An ``async def`` is awaited in the event loop and cancelled when it overruns; a plain
``def`` runs in a worker thread, so blocking code cannot stall the server (a thread
that never returns is abandoned, not waited for). Either way the caller gets an answer
within the time limit: :class:`~docbase.core.errors.HookTimedOut` (504 over HTTP).
A :class:`~docbase.core.errors.DocbaseError` the function raises on purpose
(``Rejected``, ``Forbidden``, ...) passes unchanged; anything else becomes
:class:`~docbase.core.errors.HookFailed`, which names the function.

The hook log is a system collection of job runs and failed after-hooks: each is
recorded as one document of :data:`HOOK_LOG`, readable with a full-access key
(``GET /rest/_hooklog``), and logged to the ``docbase.hooks`` logger. It is
bookkeeping, not a user's write: it goes straight to the store.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from docbase.core.documents import new_document
from docbase.core.errors import DocbaseError, HookFailed, HookTimedOut

if TYPE_CHECKING:
    from docbase.core.ports import DocumentStore

HOOK_LOG = "_hooklog"
"""The system collection of job outcomes and after-hook failures."""

logger = logging.getLogger("docbase.hooks")

UserFunction = Callable[[Any], Awaitable[None] | None]
"""A hook or job as a user writes it: ``async def`` or ``def``, taking its context."""


def function_name(function: Callable[..., Any]) -> str:
    """The name a hook or job is known by in errors and logs: ``module.qualname``."""
    module = getattr(function, "__module__", None) or "?"
    return f"{module}.{getattr(function, '__qualname__', repr(function))}"


async def call_within(function: UserFunction, context: Any, *, name: str,
                      seconds: float) -> None:
    """Call ``function(context)``, giving it at most ``seconds``.

    Raises:
        HookTimedOut: it did not finish in time (it is cancelled or abandoned).
        HookFailed: it raised something other than a ``DocbaseError``; chained.
        DocbaseError: it raised one on purpose.

    """
    if inspect.iscoroutinefunction(function):
        running: asyncio.Future[Any] = asyncio.ensure_future(function(context))
    else:
        running = asyncio.ensure_future(asyncio.to_thread(function, context))
    try:
        done, _ = await asyncio.wait({running}, timeout=seconds)
    except asyncio.CancelledError:
        running.cancel()
        raise
    if not done:
        running.cancel()  # not awaited: a function that ignores cancellation is left behind
        running.add_done_callback(_consume)
        raise HookTimedOut(f"{name} did not finish within {seconds:g} s", name)
    error = running.exception()
    if error is None:
        return
    if isinstance(error, DocbaseError):
        raise error
    raise HookFailed(f"{name} failed: {type(error).__name__}", name) from error


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read, so asyncio does not log "exception never retrieved"


def describe(error: BaseException) -> tuple[str, str]:
    """Return ``(status, message)`` of a failed hook or job for the log."""
    if isinstance(error, HookTimedOut):
        return "timeout", error.message
    if isinstance(error, HookFailed):
        return "failed", error.message
    if isinstance(error, DocbaseError):
        return "failed", f"{type(error).__name__}: {error.message}"
    return "failed", type(error).__name__


async def record(store: DocumentStore, entry: dict[str, Any]) -> None:
    """Store one outcome in the hook log; a storage failure is only logged."""
    entry = {**entry, "host": socket.gethostname(), "pid": os.getpid()}
    try:
        await store.insert(HOOK_LOG, [new_document(entry, "hook")])
    except DocbaseError as exc:
        logger.error("cannot record in %s: %s (%s)", HOOK_LOG, exc.message, entry)
