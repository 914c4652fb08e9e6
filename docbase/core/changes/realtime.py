"""The realtime stream (``GET /realtime``): change-log entries as the original's named events.

Each entry becomes one or more events, as the original sends them:

- ``post``: ``{"event": "post", "collection": C, "data": {document}}``, one per document;
- ``put`` (PUT and PATCH): ``{"event": "put", "collection": C, "data": "ID"}``;
- ``delete``: ``{"event": "delete", "collection": C, "data": ["ID", ...]}``, one per write;
- a custom event (``POST /realtime``): ``{"event": NAME, "data": DATA}``;
- a write of a batch adds ``"batch": ID`` to its events (``docs/batch.md``);
- ``ping`` every ``limits.realtime_ping_interval`` seconds (first at once), its data the
  current time.

Every event carries an id to resume from: ``SEQ`` for the last (or only) event of entry
``SEQ``, ``SEQ.I`` for event ``I`` (from 0) of an entry that makes several; a ping's id
is the entry the stream has reached. What a subscriber sees of each entry is decided by
:class:`~docbase.core.changes.readable.ReadableChanges`, the rule of every principal's
feed. The HTTP layer only encodes what :func:`realtime_events` yields.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple

import msgspec

from docbase.core.changes.entries import Change
from docbase.core.changes.feed import ChangeFeed
from docbase.core.errors import InvalidQuery
from docbase.core.ids import utc_now
from docbase.core.settings.limits import Limits

RESERVED_EVENTS = frozenset({"ping", "post", "put", "delete"})
"""Event names only docbase sends."""
_EVENT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}")
_EVENT_ID = re.compile(r"(\d{1,18})(?:\.(\d{1,9}))?")
_encode = msgspec.json.Encoder().encode


class RealtimeEvent(NamedTuple):
    """One server-sent event: its name, id and JSON data (or a date for a ping)."""

    name: str
    id: str
    data: str


class ResumePoint(NamedTuple):
    """Where a stream resumes: after entry ``seq``, or after event ``part`` of it."""

    seq: int
    part: int | None = None

    @property
    def after(self) -> int:
        """The entry to read after: the one before ``seq`` when resuming inside it."""
        return self.seq if self.part is None else self.seq - 1


def parse_event_id(text: str) -> ResumePoint:
    """Read a ``Last-Event-ID`` (``SEQ`` or ``SEQ.I``).

    Raises:
        InvalidQuery: it is neither.

    """
    match = _EVENT_ID.fullmatch(text.strip())
    if match is None:
        raise InvalidQuery(f"Last-Event-ID {text!r} is not an event id of this stream "
                           "(SEQ or SEQ.I)")
    seq, part = match.groups()
    return ResumePoint(int(seq), None if part is None else int(part))


def check_event_name(name: object) -> str:
    """Return ``name`` if a custom event may be called so.

    Raises:
        InvalidQuery: not a string of letters, digits, ``_ . : -`` (64 at most), or one
            of :data:`RESERVED_EVENTS`.

    """
    if not isinstance(name, str) or not _EVENT_NAME.fullmatch(name):
        raise InvalidQuery("event must be a name of letters, digits, '_', '.', ':' and "
                           "'-' (at most 64), e.g. \"chat-message\"")
    if name in RESERVED_EVENTS:
        raise InvalidQuery(f"event {name!r} is reserved (ping, post, put and delete are "
                           "sent by docbase)")
    return name


class RenderedEvents:
    """The encoded events of the newest changes, made once for every stream of a process.

    Streams served by one fan-out receive the very same :class:`Change` objects, so
    the events are looked up by identity (the change is kept, so its id stays its own).
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._made: OrderedDict[int, tuple[Change, list[tuple[str, str]]]] = OrderedDict()

    def __call__(self, change: Change) -> list[tuple[str, str]]:
        """The ``(name, JSON data)`` of each event ``change`` makes."""
        found = self._made.get(id(change))
        if found is not None and found[0] is change:
            return found[1]
        events = [(name, _encode(data).decode()) for name, data in events_of(change)]
        self._made[id(change)] = (change, events)
        if len(self._made) > self.size:
            self._made.popitem(last=False)
        return events


RENDERED = RenderedEvents()
"""The process's cache of encoded events (:func:`realtime_events` uses it)."""


def events_of(change: Change) -> list[tuple[str, Any]]:
    """The ``(name, data object)`` of each event an entry makes, in order."""
    if change.custom:
        return [(change.event, {"event": change.event, "data": change.data})]
    head = {"event": change.event, "collection": change.collection}
    if change.batch is not None:
        head["batch"] = change.batch
    if change.event == "post":
        return [("post", {**head, "data": d}) for d in change.documents]
    if change.event == "put":
        return [("put", {**head, "data": i}) for i in change.ids]
    return [(change.event, {**head, "data": list(change.ids)})]


async def realtime_events(
    feed: ChangeFeed, limits: Limits, seen: Callable[[Change], Awaitable[Change | None]], *,
    resume: ResumePoint | None, still_allowed: Callable[[], Awaitable[bool]],
    label: Callable[[int], str] = str,
) -> AsyncIterator[RealtimeEvent]:
    """The events of a realtime stream, for as long as it is read and ``still_allowed()``.

    ``seen`` gives each change as the subscriber may see it (``None``: not at all).
    ``still_allowed`` is asked before every ping (the credential may have been revoked,
    realtime switched off); the stream ends when it says no. ``label`` writes a sequence
    number as an event id (a scoped stream's: :mod:`.event_ids`).

    Raises:
        BackendError: the store failed while catching up from ``resume``.

    """
    since = None if resume is None else resume.after
    loop = asyncio.get_running_loop()
    async with feed.subscription(since) as subscription:
        next_ping = loop.time()
        while True:
            wait = next_ping - loop.time()
            batch = await subscription.next(wait) if wait > 0 else []
            for logged in batch:
                change = await seen(logged)
                if change is None:
                    continue
                events = RENDERED(change)
                skip = (resume.part if resume is not None and resume.part is not None
                        and resume.seq == change.seq else -1)
                last = len(events) - 1
                for part, (name, data) in enumerate(events):
                    if part > skip:
                        event_id = (label(change.seq) if part == last
                                    else f"{label(change.seq)}.{part}")
                        yield RealtimeEvent(name, event_id, data)
            if loop.time() >= next_ping:
                if not await still_allowed():
                    return
                yield RealtimeEvent("ping", label(subscription.position), utc_now())
                next_ping = loop.time() + limits.realtime_ping_interval
