"""Reaching an adapter lazily: import what a ``"module:attribute"`` string names.

Core never imports an adapter module at import time; the scheme registry
(:mod:`docbase.core.schemes`), the composition root and the webhook dispatcher name
their defaults as strings and import them only when used, so a missing optional
driver fails only where it is needed (with the adapter's ``MissingDependencyError``).
"""

from __future__ import annotations

import importlib
from typing import Any


def import_target(target: str) -> Any:
    """Import what ``"module:attribute"`` names (how core reaches an adapter lazily).

    Raises:
        ImportError: the module cannot be imported.
        AttributeError: it has no such attribute.

    """
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
