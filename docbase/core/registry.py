"""Storage URLs: a scheme-to-adapter registry and :func:`connect`.

Adapters are imported lazily, so a missing optional driver fails only when its scheme
is used (with :class:`~docbase.core.errors.MissingDependencyError`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docbase.core.errors import UnknownSchemeError

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


def open_stores(url: str) -> tuple[DocumentStore, BlobStore]:
    """Build (not yet open) the document and blob stores for a storage URL.

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
    module_name, _, attribute = target.partition(":")
    factory: Any = getattr(importlib.import_module(module_name), attribute)
    stores: tuple[DocumentStore, BlobStore] = factory(url)
    return stores


async def connect(url: str = "memory://", **options: Any) -> Database:
    """Open a :class:`~docbase.core.database.Database` on the storage at ``url``.

    ``memory://``, ``sqlite:///path.db``, ``sqlite://`` (in memory),
    ``postgresql://user@host/db`` and ``mongodb://host/db`` are understood. Keyword
    options are passed to :class:`~docbase.core.database.Database`. Close it with
    ``await db.close()`` or use ``async with``.
    """
    from docbase.core.database import Database  # noqa: PLC0415 - database imports registry users

    store, blobs = open_stores(url)
    database = Database(store, blobs, **options)
    await database.open()
    return database
