"""uvicorn's HTTP/1.1 protocol, sending a response's head and first body part in one write.

uvicorn writes a response's status line and headers, then its body, with one
``transport.write`` each; uvloop sends each at once, so every answer costs two ``send``
system calls and two TCP segments. On the machine of ``docs/benchmarks.md`` those two
writes were a third of a worker's time answering get-by-id. :class:`HeadHoldingTransport`
holds the head of a final response (not an interim ``100 Continue``, which the client is
waiting for) until the next write, the first body part, and sends both together; a
response that has no body part (``HEAD``, 204, 304) sends its head when it completes.
Streamed bodies are not held back: only the head waits, and only for the first part.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_STATUS_LINE = b"HTTP/1.1 "


class HeadHoldingTransport:
    """A transport that holds a final response's head until the next write."""

    __slots__ = ("_held", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        """Send ``data``, after the held head; hold ``data`` if it is a final response's head."""
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data[:9] == _STATUS_LINE and data[9:10] != b"1":
            self._held = bytes(data)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        """Send a held head now (its response has no body part)."""
        held, self._held = self._held, None
        if held is not None:
            self._transport.write(held)

    def close(self) -> None:
        """Send what is held, then close."""
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a :class:`HeadHoldingTransport`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Wrap the connection's transport."""
        holding: Any = HeadHoldingTransport(transport)
        super().connection_made(holding)

    def on_response_complete(self) -> None:
        """Send the head of a response without body parts, then go on as uvicorn does."""
        transport: Any = self.transport
        transport.flush()
        super().on_response_complete()
