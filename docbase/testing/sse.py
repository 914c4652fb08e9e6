"""A small server-sent-events client over httpx, for tests and benchmarks of ``/realtime``.

::

    async with open_events(client, "/realtime", params={"apikey": key}) as events:
        ping = await events.next()             # the first event is a ping
        change = await events.next(skip_pings=True)

Events are parsed by :func:`docbase.client.sse.parse_events` (the HTML standard's rules).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx

from docbase.client.sse import SseEvent, parse_events

__all__ = ["EventStream", "SseEvent", "open_events", "parse_events"]


class EventStream:
    """An open ``text/event-stream`` response and its events."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._events = parse_events(response.aiter_lines())
        self.last_id: str | None = None

    async def next(self, *, skip_pings: bool = False, within: float = 10.0) -> SseEvent:
        """The next event (the next that is not a ``ping`` with ``skip_pings``).

        Raises:
            TimeoutError: none came within ``within`` seconds.
            StopAsyncIteration: the server ended the stream.

        """
        async with asyncio.timeout(within):
            while True:
                event = await anext(self._events)
                if event.id is not None:
                    self.last_id = event.id
                if not (skip_pings and event.name == "ping"):
                    return event

    async def take(self, count: int, *, within: float = 10.0) -> list[SseEvent]:
        """The next ``count`` events that are not pings."""
        return [await self.next(skip_pings=True, within=within) for _ in range(count)]


@contextlib.asynccontextmanager
async def open_events(client: httpx.AsyncClient, path: str, *,
                      params: dict[str, str] | None = None,
                      headers: dict[str, str] | None = None) -> AsyncIterator[EventStream]:
    """``GET path`` as an event stream; the response must be 200 ``text/event-stream``.

    Raises:
        AssertionError: it is not (the message carries the answer).

    """
    async with client.stream("GET", path, params=params, headers=headers) as response:
        if response.status_code != 200:
            await response.aread()
            raise AssertionError(f"{path}: {response.status_code} {response.text}")
        kind = response.headers.get("content-type", "")
        assert kind.startswith("text/event-stream"), kind
        yield EventStream(response)
