"""``docbase.connect``, typed for both what it opens: a database here, or one served elsewhere.

:func:`docbase.core.composition.connect` opens either; it is typed as returning a
:class:`~docbase.core.database.Database`, since the core knows nothing of the remote
client. This module gives the one entry point the overloads a type checker needs: a
call with a credential of the remote client (``apikey``, ``jwt`` or ``login``) returns
a :class:`~docbase.client.RemoteDatabase`, any other call a ``Database``. The remote
client is only imported when an ``https://`` URL is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from docbase.core.composition import connect as open_url

if TYPE_CHECKING:
    import ssl
    from pathlib import Path

    from docbase.client import RemoteDatabase, Retries
    from docbase.core.database import Database

__all__ = ["connect"]


@overload
async def connect(
    url: str, *, apikey: str, verify: bool | str | Path | ssl.SSLContext = ...,
    timeout: float = ..., retries: Retries | None = ...,  # noqa: ASYNC109
) -> RemoteDatabase: ...


@overload
async def connect(
    url: str, *, jwt: str, verify: bool | str | Path | ssl.SSLContext = ...,
    timeout: float = ..., retries: Retries | None = ...,  # noqa: ASYNC109
) -> RemoteDatabase: ...


@overload
async def connect(
    url: str, *, login: tuple[str, str], verify: bool | str | Path | ssl.SSLContext = ...,
    timeout: float = ..., retries: Retries | None = ...,  # noqa: ASYNC109
) -> RemoteDatabase: ...


@overload
async def connect(url: str = ..., **options: Any) -> Database: ...


async def connect(url: str = "memory://", **options: Any) -> Database | RemoteDatabase:
    """Open the database at ``url``: embedded storage, or ``https://`` for a served one.

    ``docs/embedding.md`` lists the storage URLs and options, ``docs/client.md`` the
    remote ones. Typed as returning a ``RemoteDatabase`` when given ``apikey``, ``jwt``
    or ``login``, else a ``Database``.

    Raises:
        UnknownSchemeError: no adapter for the URL's scheme.
        MissingDependencyError: the adapter's driver (or ``httpx``) is not installed.
        Unauthorized: a remote login was refused.

    """
    return await open_url(url, **options)
