"""The HTTP layer: docbase's REST API as a Litestar application or plugin."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use: the server's supervisor needs none of the app
    from docbase.http.app import DocbasePlugin, create_app

__all__ = ["DocbasePlugin", "create_app"]


def __getattr__(name: str) -> Any:
    """Import :class:`DocbasePlugin` or :func:`create_app` on first use."""
    if name not in __all__:
        raise AttributeError(f"module 'docbase.http' has no attribute {name!r}")
    value = getattr(importlib.import_module("docbase.http.app"), name)
    globals()[name] = value
    return value
