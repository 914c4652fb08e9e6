"""Server-sent events (``text/event-stream``) parsed from a stream of lines.

Events are parsed as the HTML standard says: ``event:``, ``data:`` (joined by
newlines), ``id:`` lines, an empty line ends an event, ``:`` starts a comment. The
remote change feed (:mod:`docbase.client.changes`) and the tests' SSE client
(:mod:`docbase.testing.sse`) both read ``/realtime`` with it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

__all__ = ["SseEvent", "parse_events"]


class SseEvent(NamedTuple):
    """One received event."""

    name: str
    id: str | None
    data: str

    def json(self) -> Any:
        """The data decoded as JSON."""
        return json.loads(self.data)


async def parse_events(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """The events of a stream of lines (without their line breaks)."""
    name, event_id, data = "message", None, list[str]()
    async for line in lines:
        if not line:
            if data:
                yield SseEvent(name, event_id, "\n".join(data))
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
