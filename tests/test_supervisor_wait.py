"""The supervisor of ``docbase serve`` answers a signal at once, not at its next round.

uvicorn's supervisor handles queued signals between rounds 0.5 s apart, so every
SIGTERM (each stop of a test's server, a service manager's restart) waited 0.25 s on
average before the workers heard of it. ``WatchfulMultiprocess`` waits on an event that
also ends once a signal is queued (``docbase/http/supervision.py``).
"""

from __future__ import annotations

import signal
import threading
import time

from docbase.http.supervision import SignalWatchingEvent

HANG = 30.0
"""Seconds only a hang takes: the waits below are 60 s unless a signal or a set ends them."""


def _later(action: object) -> threading.Timer:
    timer = threading.Timer(0.2, action)  # type: ignore[arg-type]
    timer.start()
    return timer


def test_a_queued_signal_ends_the_wait_unset() -> None:
    signals: list[int] = []
    event = SignalWatchingEvent(signals)
    _later(lambda: signals.append(signal.SIGTERM)).join()
    started = time.monotonic()
    assert event.wait(60) is False
    assert time.monotonic() - started < HANG


def test_a_signal_queued_while_waiting_ends_the_wait() -> None:
    signals: list[int] = []
    event = SignalWatchingEvent(signals)
    timer = _later(lambda: signals.append(signal.SIGINT))
    started = time.monotonic()
    assert event.wait(60) is False
    assert time.monotonic() - started < HANG
    timer.join()


def test_set_ends_the_wait_and_no_signal_waits_out_the_timeout() -> None:
    signals: list[int] = []
    event = SignalWatchingEvent(signals)
    assert event.wait(0.1) is False
    timer = _later(event.set)
    assert event.wait(60) is True
    timer.join()
    assert event.wait() is True
