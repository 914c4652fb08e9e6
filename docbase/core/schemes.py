"""Storage URLs: the registry mapping a URL scheme to the adapter that opens it.

Adapters are imported lazily, so a missing optional driver fails only when its scheme
is used (with :class:`~docbase.core.errors.MissingDependencyError`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from docbase.core.errors import UnknownSchemeError
from docbase.core.plugins import import_target
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, AutoIndexing

if TYPE_CHECKING:
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
                auto_index: AutoIndexing | None = None) -> tuple[DocumentStore, BlobStore]:
    """Build (not yet open) the document and blob stores for a storage URL.

    The adapter's ``from_url(url, query_timeout=...)`` bounds each store operation
    (``limits.query_timeout``) as its engine allows; ``auto_index`` (``limits.auto_index*``)
    lets a SQL store index often-queried paths by itself (other adapters take no notice).

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
        url, query_timeout=query_timeout, auto_index=auto_index)
    return stores
