"""``GET /_/events``: the change feed for an open console page, as server-sent events.

The same stream as ``GET /realtime`` (:func:`~docbase.core.changes.realtime.realtime_events`
with the same :class:`~docbase.core.changes.readable.ReadableChanges`), authenticated
by the console session instead of a key: a page of the collection browser listens to it
and reloads its table when its collection changes. Like ``/realtime`` it needs the
database's
``realtime.global`` setting on (403 otherwise); the session is checked again before
every ping, so signing out ends the stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from litestar import get
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from docbase.core.auth.sessions import find_session
from docbase.core.changes.readable import ReadableChanges
from docbase.core.changes.realtime import realtime_events
from docbase.core.errors import DocbaseError
from docbase.http.console.guard import SESSION_COOKIE, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS
from docbase.http.realtime import require_realtime


@get(console_paths("/events"))
async def console_events(request: HttpRequest) -> ServerSentEvent:
    """``GET /_/events``: post, put and delete events of every collection, and pings."""
    console = await signed_in(request)
    database = console.database
    await require_realtime(database)
    token = request.cookies.get(SESSION_COOKIE)

    async def still_allowed() -> bool:
        try:
            await require_realtime(database)
        except DocbaseError:
            return False
        return await find_session(database, token) is not None

    events = realtime_events(database.changes, database.limits,
                             ReadableChanges(console.principal, None, database.reads),
                             resume=None, still_allowed=still_allowed)

    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        async for event in events:
            yield ServerSentEventMessage(data=event.data, event=event.name, id=event.id)

    return ServerSentEvent(messages(), headers=dict(CONSOLE_HEADERS))
