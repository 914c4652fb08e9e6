"""Importing on first use: an adapter a string names, a library a worker may not need.

Core never imports an adapter module at import time; the scheme registry
(:mod:`docbase.core.schemes`), the composition root and the webhook dispatcher name
their defaults as strings and import them only when used, so a missing optional
driver fails only where it is needed (with the adapter's ``MissingDependencyError``).
:func:`lazy_module` does the same for libraries that cost memory in every process that
imports them (JWT, cryptography, httpx).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def import_target(target: str) -> Any:
    """Import what ``"module:attribute"`` names (how core reaches an adapter lazily).

    Raises:
        ImportError: the module cannot be imported.
        AttributeError: it has no such attribute.

    """
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, imported on first use of one of its attributes.

    For libraries a worker may never need (JWT signing, certificates, the webhook
    client): each costs a few MiB per process once imported (``docs/benchmarks.md``,
    run 8). Declare the name for the type checker as a plain import under
    ``TYPE_CHECKING``.
    """
    return _Deferred(name)


class _Deferred(ModuleType):
    """Stands for a module until an attribute is asked for, then imports it."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # introspection (copy, pickle, doctest) imports nothing
            raise AttributeError(attribute)
        module = importlib.import_module(self.__name__)
        value = getattr(module, attribute)
        self.__dict__[attribute] = value
        return value
