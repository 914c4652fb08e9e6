"""``/media`` of a remote database: uploads, content, metadata (``docs/media.md``).

:class:`RemoteMedia` is ``db.media`` of a
:class:`~docbase.client.database.RemoteDatabase`: the calls of the embedded
:class:`~docbase.core.media.Media` that make sense across the network, as requests.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.documents import Document
from docbase.core.media import Upload, Uploaded
from docbase.core.query import JSON

if TYPE_CHECKING:
    from docbase.client.transport import Transport

__all__ = ["RemoteMedia"]


class RemoteMedia:
    """The media files of a remote database."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def upload(self, uploads: Sequence[Upload]) -> Uploaded:
        """``POST /media`` (multipart): store the files; their upload id and ids.

        Each :class:`~docbase.core.media.Upload`'s content must be ``bytes`` here.
        """
        files = []
        for upload in uploads:
            if not isinstance(upload.content, bytes):
                raise TypeError("a remote upload's content must be bytes")
            kind = mimetypes.guess_type(upload.filename)[0] or "application/octet-stream"
            files.append(("file", (upload.filename, upload.content, kind)))
        answer = await self.transport.request("POST", "/media", files=files)
        return Uploaded(answer["uploadid"], list(answer["ids"]))

    async def read(self, media_ref: str, size: str | None = None) -> bytes:
        """``GET /media/<id or name>``: the original's bytes, or ``size`` ``t``/``w``'s."""
        params = {} if size is None else {"s": size}
        response = await self.transport.send("GET", f"/media/{media_ref}", params=params)
        return response.content

    async def meta(self, media_ref: str) -> Document:
        """``GET /media/<id>/meta``: one file's metadata record."""
        answer = await self.transport.request("GET", f"/media/{media_ref}/meta")
        record: Document = answer[0]
        return record

    async def find(self, q: Mapping[str, JSON] | None = None,
                   h: Mapping[str, JSON] | None = None) -> list[Document]:
        """``GET /media/*/meta?q&h``: the records matching ``q``."""
        params = {"q": msgspec.json.encode(dict(q or {})).decode()}
        if h is not None:
            params["h"] = msgspec.json.encode(dict(h)).decode()
        found: list[Document] = await self.transport.request("GET", "/media/*/meta",
                                                             params=params)
        return found

    async def find_ids(self, ids: Sequence[str]) -> list[Document]:
        """``GET /media/*/meta?ids=``: the records of ``ids``, in that order."""
        found: list[Document] = await self.transport.request(
            "GET", "/media/*/meta", params={"ids": ",".join(ids)})
        return found

    async def delete(self, media_ref: str) -> list[str]:
        """``DELETE /media/<id>``: the bytes, derivatives and record; ``[id]``."""
        answer: dict[str, Any] = await self.transport.request("DELETE", f"/media/{media_ref}")
        return list(answer["result"])
