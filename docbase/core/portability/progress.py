"""What a long portability operation reports while it runs, and at its end.

Core knows no terminal: an operation calls a :class:`Progress` it was given; the
command line implements it with a progress bar or plain lines (``docbase/cli/``).
"""

from __future__ import annotations

from typing import Protocol

import msgspec


class Progress(Protocol):
    """Told about each step of an export, import or migration."""

    def begin(self, task: str, total: int | None) -> None:
        """A step starts: ``task`` names it, ``total`` documents are expected (if known)."""

    def advance(self, documents: int, size: int = 0) -> None:
        """``documents`` more documents (and ``size`` more bytes) are done."""

    def end(self) -> None:
        """The step is done."""


class QuietProgress:
    """Reports nothing (the library's default)."""

    def begin(self, task: str, total: int | None) -> None:
        """Ignore the step."""

    def advance(self, documents: int, size: int = 0) -> None:
        """Ignore the advance."""

    def end(self) -> None:
        """Ignore the end."""


class Summary(msgspec.Struct, kw_only=True):
    """What an operation did, for its closing line."""

    collections: int = 0
    documents: int = 0
    bytes: int = 0
    media: int = 0
    seconds: float = 0.0

    def line(self, verb: str) -> str:
        """``exported 3 collections, 1200 documents, 4 media, 1.2 MB in 0.8 s``."""
        return (f"{verb} {self.collections} collection(s), {self.documents} document(s), "
                f"{self.media} media file(s), {self.bytes / 1e6:.1f} MB "
                f"in {self.seconds:.1f} s")
