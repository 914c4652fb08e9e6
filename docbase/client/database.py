"""A docbase served elsewhere, with the embedded API's shape: ``docbase.connect("https://...")``.

:func:`connect_remote` opens a :class:`RemoteDatabase` on a server's base URL (``https://host:8443``,
or ``https://host:8443/db/<name>`` for one database of several). Its collections
answer the calls of the embedded :class:`~docbase.core.collection.Collection` with the
same documents and the same exceptions; ``docs/client.md`` lists what differs.
"""

from __future__ import annotations

import ssl
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from docbase.client.batch import RemoteBatch, running
from docbase.client.changes import follow
from docbase.client.collection import RemoteCollection
from docbase.client.media import RemoteMedia
from docbase.client.operator import RemoteOperator
from docbase.client.transport import Retries, Transport
from docbase.core.names import check_collection_name
from docbase.core.query import JSON

__all__ = ["RemoteDatabase", "connect_remote"]


def database_name(url: str) -> str:
    """The database a base URL names: ``/db/<name>`` routes to ``name``."""
    parts = [p for p in urlsplit(url).path.split("/") if p]
    return parts[1] if len(parts) >= 2 and parts[0] == "db" else "docbase"


class RemoteDatabase:
    """One database of a docbase server, reached over HTTPS with one credential."""

    def __init__(self, transport: Transport, name: str | None = None) -> None:
        self.transport = transport
        self.name = name or database_name(transport.base_url)
        self.media = RemoteMedia(transport)
        """``/media``: uploads, content and metadata."""
        self.operator = RemoteOperator(transport)
        """``/_ops``: keys, users, export and import (full-access key)."""

    async def __aenter__(self) -> RemoteDatabase:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the pooled connections."""
        await self.transport.close()

    def collection(self, name: str) -> RemoteCollection:
        """The user collection ``name``, acting as the database's credential.

        Raises:
            InvalidQuery: ``name`` is not a valid collection name.

        """
        return RemoteCollection(self.transport, check_collection_name(name))

    def batch(self, *, atomic: bool = True) -> AbstractAsyncContextManager[RemoteBatch]:
        """``async with db.batch() as batch:``: the block's calls as one ``POST /batch``.

        The writes (and ``get``/``find``) of the block's collections are queued, each
        returning a pending answer whose fields stand for the values not received yet;
        the block's end sends them with one ``Idempotency-Key`` and fills the answers.
        Atomic (the default): all or nothing, a failing request raising its error.

        Raises:
            DocbaseError: the first failing request's error.
            TransactionsUnsupported: ``atomic`` on a server storing in MongoDB.

        """
        return running(self.transport, atomic=atomic)

    async def meta(self) -> dict[str, Any]:
        """``GET /rest/_meta``: the database's mode and each collection's description."""
        meta: dict[str, Any] = await self.transport.request("GET", "/rest/_meta")
        return meta

    async def collections(self) -> list[str]:
        """The user collections the server describes, sorted."""
        return sorted(c["name"] for c in (await self.meta())["collections"])

    async def child_fields(self, collection: str) -> list[str]:
        """The child fields (subcollections) recorded for a parent collection."""
        meta = await self.collection(collection).meta()
        return [c["name"] for c in meta.get("children") or ()]

    async def put_schema(self, collection: str, schema: dict[str, Any]) -> dict[str, Any]:
        """``PUT /rest/<c>/_meta``: define (or replace) a collection's schema."""
        answer: dict[str, Any] = await self.transport.request(
            "PUT", f"/rest/{check_collection_name(collection)}/_meta", json=schema)
        return answer

    async def delete_schema(self, collection: str) -> None:
        """``DELETE /rest/<c>/_meta``: drop a collection's schema (its documents stay)."""
        await self.transport.request("DELETE", f"/rest/{check_collection_name(collection)}/_meta")

    async def send_mail(self, body: JSON) -> list[str]:
        """``POST /mail``: send one message or an array; their outbound record ids."""
        answer = await self.transport.request("POST", "/mail", json=body)
        return [r["email_outbound_id"] for r in answer["result"]]

    def changes(self, *, since: int | str | None = None) -> Any:
        """Iterate over the changes of ``GET /realtime`` after event ``since`` (SSE).

        ``async for change in db.changes(): ...``; a dropped connection is resumed
        with ``Last-Event-ID``. The server must have ``realtime.global`` on.
        """
        return follow(self.transport, last_event_id=since)

    async def publish(self, event: str, data: JSON = None) -> None:
        """``POST /realtime``: send a custom event to every subscriber."""
        await self.transport.request("POST", "/realtime", json={"event": event, "data": data})


async def connect_remote(
    url: str, *, apikey: str | None = None, jwt: str | None = None,
    login: tuple[str, str] | None = None, verify: bool | str | Path | ssl.SSLContext = True,
    timeout: float = 30.0,  # noqa: ASYNC109 - each request's limit, not this call's
    retries: Retries | None = None,
) -> RemoteDatabase:
    """Open the database served at ``url`` with an API key, a token or a login.

    ``verify`` is on by default; give the server's certificate file
    (``"docbase-data/cert.pem"``) to trust a self-signed one. ``login=(email, password)``
    signs in with ``POST /auth/login`` and uses the token it answers.

    Raises:
        Unauthorized: the login was refused.
        BackendError: the server cannot be reached.

    """
    transport = Transport(url, apikey=apikey, jwt=jwt, verify=verify, timeout=timeout,
                          retries=retries)
    if login is not None:
        email, password = login
        try:
            answer = await transport.request("POST", "/auth/login",
                                             json={"email": email, "password": password})
        except BaseException:
            await transport.close()
            raise
        transport.set_credential(jwt=answer["jwt"])
    return RemoteDatabase(transport)



