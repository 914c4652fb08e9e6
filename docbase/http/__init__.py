"""The HTTP layer: docbase's REST API as a Litestar application or plugin."""

from __future__ import annotations

from docbase.http.app import DocbasePlugin, create_app

__all__ = ["DocbasePlugin", "create_app"]
