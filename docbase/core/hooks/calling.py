"""Calling a user's hook or job: within its time limit, its failures named.

An ``async def`` is awaited in the event loop and cancelled when it overruns; a plain
``def`` runs in a worker thread, so blocking code cannot stall the server (a thread
that never returns is abandoned, not waited for). Either way the caller gets an answer
within the time limit: :class:`~docbase.core.errors.HookTimedOut` (504 over HTTP).
A :class:`~docbase.core.errors.DocbaseError` the function raises on purpose
(``Rejected``, ``Forbidden``, ...) passes unchanged; anything else becomes
:class:`~docbase.core.errors.HookFailed`, which names the function.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from docbase.core.errors import DocbaseError, HookFailed, HookTimedOut

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
