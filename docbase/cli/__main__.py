"""``python -m docbase.cli``: the ``docbase`` command."""

from __future__ import annotations

from docbase.cli import entry_point

entry_point()
