"""Progress of the portability commands on stderr: a bar on a terminal, else plain lines.

On a terminal (stderr is a TTY) each step gets a ``rich`` progress bar with its count,
rate and remaining time; otherwise a plain line is printed when a step starts, every
:data:`EVERY_SECONDS` while it runs, and when it ends, so logs of scheduled runs stay
readable. Both implement :class:`docbase.core.portability.Progress`.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from docbase.cli.common import say

EVERY_SECONDS = 5.0


class LineProgress:
    """Plain periodic lines (stderr is not a terminal)."""

    def __init__(self) -> None:
        self._task = ""
        self._total: int | None = None
        self._done = 0
        self._began = 0.0
        self._said = 0.0

    def begin(self, task: str, total: int | None) -> None:
        """Start a step."""
        self._task, self._total, self._done = task, total, 0
        self._began = self._said = time.monotonic()

    def advance(self, documents: int, size: int = 0) -> None:
        """Count done documents; say how far every few seconds."""
        self._done += documents
        now = time.monotonic()
        if now - self._said >= EVERY_SECONDS:
            self._said = now
            say(self._line(now))

    def end(self) -> None:
        """Say the step is done."""
        say(self._line(time.monotonic()))

    def _line(self, now: float) -> str:
        seconds = max(now - self._began, 1e-9)
        total = "" if self._total is None else f"/{self._total}"
        return f"{self._task}: {self._done}{total} ({self._done / seconds:,.0f}/s)"


class BarProgress:
    """A ``rich`` progress bar per step (stderr is a terminal)."""

    def __init__(self) -> None:
        from rich.progress import (  # noqa: PLC0415 (rich is optional: the server extra)
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), TaskProgressColumn(),
                             TextColumn("{task.fields[rate]}/s"), TransferSpeedColumn(),
                             TimeRemainingColumn(), transient=False)
        self._task: Any = None
        self._began = 0.0
        self._done = 0

    def begin(self, task: str, total: int | None) -> None:
        """Start a step's bar."""
        if self._task is None:
            self._bar.start()
        self._task = self._bar.add_task(task, total=total, rate="0")
        self._began, self._done = time.monotonic(), 0

    def advance(self, documents: int, size: int = 0) -> None:
        """Move the bar."""
        self._done += documents
        rate = self._done / max(time.monotonic() - self._began, 1e-9)
        self._bar.update(self._task, advance=documents, rate=f"{rate:,.0f}")

    def end(self) -> None:
        """Leave the finished bar on screen."""

    def stop(self) -> None:
        """Stop drawing."""
        self._bar.stop()


def progress_for_stderr() -> LineProgress | BarProgress:
    """A bar on a terminal (when ``rich`` is installed), else plain lines."""
    if sys.stderr.isatty():
        try:
            return BarProgress()
        except ImportError:
            pass
    return LineProgress()
