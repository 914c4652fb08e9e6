"""Storage URLs: a scheme-to-adapter registry and :func:`connect`.

Adapters are imported lazily, so a missing optional driver fails only when its scheme
is used (with :class:`~docbase.core.errors.MissingDependencyError`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from docbase.core.errors import UnknownSchemeError
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, Limits

if TYPE_CHECKING:
    from docbase.core.database import Database
    from docbase.core.ports import BlobStore, DocumentStore

StoreFactory = Callable[[str], "tuple[DocumentStore, BlobStore]"]

_SCHEMES: dict[str, str] = {
    "memory": "docbase.adapters.memory:from_url",
    "sqlite": "docbase.adapters.sql:from_url",
    "postgresql": "docbase.adapters.sql:from_url",
    "postgres": "docbase.adapters.sql:from_url",
    "mongodb": "docbase.adapters.mongo:from_url",
    "mongodb+srv": "docbase.adapters.mongo:from_url",
}


def register_scheme(scheme: str, target: str) -> None:
    """Map a URL scheme to ``"module:factory"``; the factory takes the URL."""
    _SCHEMES[scheme] = target


def known_schemes() -> list[str]:
    """The registered URL schemes, sorted."""
    return sorted(_SCHEMES)


def scheme_of(url: str) -> str:
    """The scheme of a storage URL, without a ``+driver`` suffix (except mongodb+srv)."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "mongodb+srv":
        return scheme
    return scheme.partition("+")[0]


def open_stores(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
                ) -> tuple[DocumentStore, BlobStore]:
    """Build (not yet open) the document and blob stores for a storage URL.

    The adapter's ``from_url(url, query_timeout=...)`` bounds each store operation
    (``limits.query_timeout``) as its engine allows.

    Raises:
        UnknownSchemeError: no adapter is registered for the scheme.
        MissingDependencyError: the adapter's driver is not installed.

    """
    scheme = scheme_of(url)
    target = _SCHEMES.get(scheme)
    if target is None:
        raise UnknownSchemeError(
            f"no storage adapter for {url.partition('://')[0] or url!r}; "
            f"known schemes: {', '.join(known_schemes())}"
        )
    stores: tuple[DocumentStore, BlobStore] = import_target(target)(
        url, query_timeout=query_timeout)
    return stores


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


async def connect(url: str = "memory://", **options: Any) -> Database:
    """Open a :class:`~docbase.core.database.Database` on the storage at ``url``.

    ``memory://``, ``sqlite:///path.db``, ``sqlite://`` (in memory),
    ``postgresql://user@host/db`` and ``mongodb://host/db`` are understood. Keyword
    options are passed to :class:`~docbase.core.database.Database`. Close it with
    ``await db.close()`` or use ``async with``.
    """
    from docbase.core.composition import (  # noqa: PLC0415 - composition imports registry
        DatabaseSpec,
        build_database,
    )

    name = options.pop("name", "docbase")
    limits = options.pop("limits", None) or Limits()
    database = build_database(DatabaseSpec(name, url, limits), **options)
    await database.open()
    return database
