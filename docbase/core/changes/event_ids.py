"""Event ids of a scoped realtime stream, which say nothing about the writes it misses.

A full-access stream's event ids are change-log sequence numbers (``41``, ``41.0``):
it sees every write, so the numbers tell it nothing new. A scoped stream (a scoped key,
a user's token) sees only what it may read, and plain numbers would tell it how many
writes it did not see between two of its events. Its ids are the sequence numbers
passed through a keyed permutation of 64-bit numbers (a four-round Feistel network of
HMAC-SHA256, keyed by the database's secret), written ``x`` and 16 hexadecimal
digits (``x9c0e5a...``, ``x9c0e5a....1`` for the second event of an entry): unordered
and unrelated to one another for anyone without the key, and turned back into the
sequence number when the stream is resumed with ``Last-Event-ID``, in every process
serving the database (the key is a stored setting).
"""

from __future__ import annotations

import hashlib
import hmac
import re

from docbase.core.changes.realtime import ResumePoint, parse_event_id
from docbase.core.errors import InvalidQuery

_HALF = 0xFFFFFFFF
_ROUNDS = 4
_MASKED_ID = re.compile(r"x([0-9a-f]{16})(?:\.(\d{1,9}))?")


class MaskedEventIds:
    """The event ids of a scoped stream: sequence numbers under a keyed permutation."""

    def __init__(self, secret: str) -> None:
        self.key = hmac.new(secret.encode(), b"docbase realtime event ids",
                            hashlib.sha256).digest()

    def _round(self, number: int, half: int) -> int:
        digest = hmac.new(self.key, bytes([number]) + half.to_bytes(4, "big"),
                          hashlib.sha256).digest()
        return int.from_bytes(digest[:4], "big")

    def mask(self, seq: int) -> int:
        """``seq`` under the permutation."""
        left, right = seq >> 32 & _HALF, seq & _HALF
        for number in range(_ROUNDS):
            left, right = right, left ^ self._round(number, right)
        return left << 32 | right

    def unmask(self, masked: int) -> int:
        """The sequence number that :meth:`mask` made ``masked`` of."""
        left, right = masked >> 32 & _HALF, masked & _HALF
        for number in reversed(range(_ROUNDS)):
            left, right = right ^ self._round(number, left), left
        return left << 32 | right

    def __call__(self, seq: int) -> str:
        """The id of (the last event of) entry ``seq``."""
        return f"x{self.mask(seq):016x}"

    def parse(self, text: str) -> ResumePoint:
        """Read a ``Last-Event-ID`` of this stream (a plain ``SEQ[.I]`` is accepted too).

        Raises:
            InvalidQuery: it is not an event id.

        """
        match = _MASKED_ID.fullmatch(text.strip())
        if match is None:
            try:
                return parse_event_id(text)
            except InvalidQuery:
                raise InvalidQuery(f"Last-Event-ID {text!r} is not an event id of this "
                                   f"stream") from None
        masked, part = match.groups()
        return ResumePoint(self.unmask(int(masked, 16)), None if part is None else int(part))
