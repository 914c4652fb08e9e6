"""Line charts drawn on the server as SVG, for the Logs page.

The console's Content-Security-Policy allows no inline script and no inline style, so a
chart is markup the template writes out: polylines, a baseline and text, styled by
``static/console.css`` through classes (presentation attributes are not styles). Each
chart says what it shows in its title and description, for screen readers.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

WIDTH = 720
HEIGHT = 160
_LEFT = 90
_RIGHT = 8
_TOP = 10
_BOTTOM = 30


class Line(msgspec.Struct, frozen=True):
    """One series: its name, CSS class and polyline points (``x,y x,y ...``)."""

    name: str
    css: str
    points: str


class Chart(msgspec.Struct, frozen=True, kw_only=True):
    """What the template draws: the lines, the top value, the time labels, a summary."""

    title: str
    keys: list[tuple[str, str]]
    """Each series' name and CSS class, for the legend."""
    lines: list[Line]
    top: str
    """The value at the top of the chart, with its unit."""
    start: str
    end: str
    summary: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = _LEFT
    bottom: int = HEIGHT - _BOTTOM


def minute_label(minute: int) -> str:
    """``HH:MM`` UTC of a minute since the epoch."""
    return datetime.fromtimestamp(minute * 60, UTC).strftime("%H:%M")


def line_chart(title: str, minutes: list[int], series: list[tuple[str, str, list[float | None]]],
               *, unit: str, summary: str) -> Chart:
    """A chart of ``series`` (name, CSS class, one value or ``None`` a minute) over ``minutes``.

    A ``None`` breaks the line (a minute without requests has no latency); the scale
    runs from 0 to the largest value.
    """
    values = [v for _, _, points in series for v in points if v is not None]
    top = max(values, default=0) or 1
    span = max(len(minutes) - 1, 1)
    inner_width = WIDTH - _LEFT - _RIGHT
    inner_height = HEIGHT - _TOP - _BOTTOM
    lines = []
    for name, css, points in series:
        segments: list[list[str]] = [[]]
        for index, value in enumerate(points):
            if value is None:
                segments.append([])
                continue
            x = _LEFT + inner_width * index / span
            y = _TOP + inner_height * (1 - value / top)
            segments[-1].append(f"{x:.1f},{y:.1f}")
        for segment in segments:
            if len(segment) == 1:  # a lone point still shows, as a short dash
                x_text, y_text = segment[0].split(",")
                segment.append(f"{float(x_text) + 8:.1f},{y_text}")
            if segment:
                lines.append(Line(name, css, " ".join(segment)))
    return Chart(title=title, keys=[(name, css) for name, css, _ in series], lines=lines,
                 top=f"{_number(top)} {unit}",
                 start=minute_label(minutes[0]) if minutes else "",
                 end=minute_label(minutes[-1]) if minutes else "", summary=summary)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"
