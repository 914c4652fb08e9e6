"""The change feed of a remote database: ``GET /realtime`` as an async iterator.

:func:`follow` reads the server-sent events of ``/realtime`` (``docs/realtime.md``)
and yields each change as a :class:`RemoteChange`. When the connection drops it
connects again with ``Last-Event-ID``, so the server resumes after the last event
received and no change is lost or repeated. ``ping`` events are skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import msgspec

from docbase.client.errors import error_from_answer
from docbase.client.sse import parse_events
from docbase.core.errors import BackendError

if TYPE_CHECKING:
    from docbase.client.transport import Transport

__all__ = ["RemoteChange", "follow"]

_DROPPED = (httpx.TransportError, httpx.StreamError)


class RemoteChange(msgspec.Struct, frozen=True):
    """One event of the feed: ``post``/``put``/``delete`` of a collection, or a custom one."""

    id: str | None
    """The event id that ``Last-Event-ID`` resumes after."""
    event: str
    """``post``, ``put``, ``delete`` or a custom event's name."""
    collection: str | None
    data: Any
    """The document (``post``), its id (``put``), the ids (``delete``), or custom data."""


def _change(name: str, event_id: str | None, text: str) -> RemoteChange:
    body = msgspec.json.decode(text) if text else None
    if isinstance(body, dict) and "event" in body:
        return RemoteChange(event_id, str(body["event"]), body.get("collection"),
                            body.get("data"))
    return RemoteChange(event_id, name, None, body)


async def follow(transport: Transport, *, last_event_id: int | str | None = None,
                 reconnects: int = 10) -> AsyncIterator[RemoteChange]:
    """Yield the changes of ``/realtime`` after ``last_event_id``; resume after a drop.

    Raises:
        DocbaseError: the server refused the feed (off, no credential, not allowed).
        BackendError: it could not be reached ``reconnects`` times in a row.

    """
    last = None if last_event_id is None else str(last_event_id)
    failures = 0
    while True:
        headers = {"accept": "text/event-stream", **transport.headers}
        if last is not None:
            headers["last-event-id"] = last
        try:
            async with transport.client.stream("GET", "/realtime", headers=headers,
                                               timeout=httpx.Timeout(
                                                   transport.timeout, read=None)) as answer:
                if answer.status_code >= 400:
                    await answer.aread()
                    raise error_from_answer(answer.status_code, answer.content,
                                            answer.headers)
                async for event in parse_events(answer.aiter_lines()):
                    failures = 0
                    if event.id is not None:
                        last = event.id
                    if event.name != "ping":
                        yield _change(event.name, event.id, event.data)
        except _DROPPED as exc:
            failures += 1
            if failures >= reconnects:
                raise BackendError(f"the change feed of {transport.base_url} dropped: "
                                   f"{exc!r}") from exc
        await asyncio.sleep(min(0.1 * 2 ** failures, 5.0))
