"""ObjectIDs and timestamps.

An ObjectID is 12 bytes written as 24 lowercase hex characters, laid out as MongoDB's:
4 bytes of seconds since the epoch (so ids sort by creation time), 5 random bytes
chosen once per process (so two processes never collide), and a 3-byte counter that
starts at a random value below 2**23. A counter that wraps from ``ffffff`` to ``000000``
within one second gives an id that sorts before the one made just before it; starting
in the lower half, a process makes 8 million ids before its first wrap, so a process's
ids sort in the order they were made (the default order of a collection). Started
anywhere below 2**24, a process making n ids wrapped among them with a chance of n in
2**24.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from datetime import UTC, datetime

from docbase.core.errors import InvalidId

_HEX24 = re.compile(r"[0-9a-fA-F]{24}")
_lock = threading.Lock()
_counter = itertools.count(int.from_bytes(os.urandom(3), "big") & 0x7FFFFF)
_process_random = os.urandom(5)
_process_pid = os.getpid()


def _reseed_after_fork() -> None:
    global _process_random, _process_pid  # noqa: PLW0603 - per-process state by definition
    _process_random = os.urandom(5)
    _process_pid = os.getpid()


os.register_at_fork(after_in_child=_reseed_after_fork)


def new_object_id() -> str:
    """Return a new, time-ordered, process-unique ObjectID."""
    with _lock:
        count = next(_counter) & 0xFFFFFF
    raw = int(time.time()).to_bytes(4, "big") + _process_random + count.to_bytes(3, "big")
    return raw.hex()


def is_object_id(value: object) -> bool:
    """Tell whether ``value`` is a 24-hex ObjectID string."""
    return isinstance(value, str) and _HEX24.fullmatch(value) is not None


def check_object_id(value: str) -> str:
    """Return ``value`` lower-cased, or raise :class:`InvalidId`."""
    if not is_object_id(value):
        raise InvalidId(f"{value!r} is not a valid ObjectID (24 hex characters)")
    return value.lower()


def object_id_time(value: str) -> datetime:
    """Return the creation second encoded in an ObjectID."""
    return datetime.fromtimestamp(int(check_object_id(value)[:8], 16), UTC)


def format_timestamp(moment: datetime) -> str:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SS.sssZ`` in UTC."""
    utc = moment.astimezone(UTC)
    # not strftime("%Y"): glibc writes year 999 as "999", breaking string order
    return f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


# the last whole second formatted and its text, one tuple replaced whole (any thread)
_second: list[tuple[int, str]] = [(-1, "")]


def utc_now() -> str:
    """Return the current time in docbase's timestamp format.

    Every write stamps its documents with this; formatting a ``datetime`` was ~2-3 % of a
    create, so the text up to the second is formatted once per second.
    """
    moment = datetime.now(UTC)
    second = int(moment.timestamp())
    cached = _second[0]
    if cached[0] != second:
        cached = _second[0] = (second, f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}")
    return f"{cached[1]}.{moment.microsecond // 1000:03d}Z"
