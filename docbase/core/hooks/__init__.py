"""Server-side hooks around the collection operations (``docs/embedding.md``)."""

from __future__ import annotations

from docbase.core.hooks.registry import Hook, HookPoint, HookRegistry

__all__ = ["Hook", "HookPoint", "HookRegistry"]
