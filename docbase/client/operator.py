"""The operator routes (``/_ops``) of a remote database: keys, users, schemas, archives.

``db.operator`` of a :class:`~docbase.client.database.RemoteDatabase`; the ``docbase
keys``/``users``/``export``/``import`` commands use it with ``--url``. Each call needs a
full-access key (``docbase/http/operator.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.keys import ApiKey
from docbase.core.auth.users import User
from docbase.core.schema.file_runs import SchemaRun

if TYPE_CHECKING:
    from docbase.client.transport import Transport

__all__ = ["RemoteOperator"]


class RemoteOperator:
    """Keys, users and archives of a remote database."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def list_keys(self) -> list[ApiKey]:
        """Every key (never its value), oldest first."""
        return msgspec.convert(await self.transport.request("GET", "/_ops/keys"), list[ApiKey])

    async def create_key(self, *, full: bool = False, paths: Sequence[str] = (),
                         methods: Sequence[str] = (), origins: Sequence[str] = (),
                         expires: str | None = None, description: str = "",
                         roles: Sequence[str] = (),
                         owner: str | None = None) -> tuple[str, ApiKey]:
        """Create a key: ``(raw key, record)``; the raw key is shown only here."""
        answer = await self.transport.request("POST", "/_ops/keys", json={
            "full": full, "paths": list(paths), "methods": list(methods),
            "origins": list(origins), "expires": expires, "description": description,
            "roles": list(roles), "owner": owner})
        return str(answer["key"]), msgspec.convert(answer["record"], ApiKey)

    async def revoke_key(self, key: str) -> ApiKey:
        """Revoke a key named by its value, its id or a unique prefix."""
        return msgspec.convert(await self.transport.request("DELETE", f"/_ops/keys/{key}"),
                               ApiKey)

    async def list_users(self) -> list[User]:
        """Every user (never a password), oldest first."""
        return msgspec.convert(await self.transport.request("GET", "/_ops/users"), list[User])

    async def create_user(self, email: str, password: str, *, displayname: str = "",
                          image: str = "", admin: bool = False,
                          roles: Sequence[str] = ()) -> User:
        """Create a user who logs in with ``password``, holding ``roles``."""
        answer = await self.transport.request("POST", "/_ops/users", json={
            "email": email, "password": password, "displayname": displayname,
            "image": image, "admin": admin, "roles": list(roles)})
        return msgspec.convert(answer, User)

    async def delete_user(self, email: str) -> User:
        """Delete a user; its tokens stop working."""
        return msgspec.convert(await self.transport.request("DELETE", f"/_ops/users/{email}"),
                               User)

    async def schemas(self) -> dict[str, Any]:
        """The stored schemas and mode, as a schema file (``docbase schema show``)."""
        document: dict[str, Any] = await self.transport.request("GET", "/_ops/schemas")
        return document

    async def apply_schemas(self, schema_file: Any, *, force: bool = False,
                            dry_run: bool = False) -> SchemaRun:
        """Apply a schema file's content (``docbase schema apply``): what it changed."""
        answer = await self.transport.request("POST", "/_ops/schemas", json=schema_file,
                                              params={"force": str(force).lower(),
                                                      "dry_run": str(dry_run).lower()})
        return msgspec.convert(answer, SchemaRun)

    async def export(self, out: Path, *, collections: Sequence[str] | None = None,
                     secrets: bool = False) -> int:
        """Write the database's archive (or ``collections``') to ``out``; its size."""
        params: dict[str, Any] = {"secrets": str(secrets).lower()}
        if collections is not None:
            params["collections"] = ",".join(collections)
        response = await self.transport.send("GET", "/_ops/export", params=params)
        await asyncio.to_thread(out.write_bytes, response.content)
        return len(response.content)

    async def import_(self, archive: Path, *, mode: str = "insert",
                      validate: bool = True) -> dict[str, Any]:
        """Import the archive at ``archive``; the summary (collections, documents, ...)."""
        content = await asyncio.to_thread(archive.read_bytes)
        summary: dict[str, Any] = await self.transport.request(
            "POST", "/_ops/import", content=content,
            params={"mode": mode, "validate": str(validate).lower()},
            headers={"content-type": "application/x-tar"})
        return summary
