"""uvicorn's HTTP/1.1 protocol, sending a response's head and first body part in one write.

uvicorn writes a response's status line and headers, then its body, with one
``transport.write`` each; uvloop sends each at once, so every answer costs two ``send``
system calls and two TCP segments. On the machine of ``docs/benchmarks.md`` those two
writes were a third of a worker's time answering get-by-id. :class:`HeadHoldingTransport`
holds the head of a final response (not an interim ``100 Continue``, which the client is
waiting for) until the next write, the first body part, and sends both together; a
response that has no body part (``HEAD``, 204, 304) sends its head when it completes.
Streamed bodies are not held back: only the head waits, and only for the first part.

The protocol also bounds how long a client may take to send a request's headers
(``header_timeout`` of the server's configuration, from ``docbase serve
--header-timeout``): uvicorn itself waits for them forever, so a few hundred clients
trickling a header byte now and then would hold every connection a worker has. The
clock starts when the connection opens or a request begins, and stops when the
headers are complete; at the deadline the connection is closed. And it bounds their
size: a request line and headers of more than :data:`MAX_HEAD_BYTES` together are
answered 431 and the connection closed (uvicorn would keep collecting them).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from docbase.core.metrics import instruments

_STATUS_LINE = b"HTTP/1.1 "

MAX_HEAD_BYTES = 128 * 1024
"""Most bytes of a request's target and headers together (431 above them)."""

_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)
_HEAD_TOO_LARGE_BODY = (b'{"name": "RequestHeaderFieldsTooLarge", "message": "the request target '
                        b'and headers exceed %d bytes", "status": 431}' % MAX_HEAD_BYTES)


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
    """uvicorn's httptools protocol on a :class:`HeadHoldingTransport`, headers timed."""

    _header_timer: asyncio.TimerHandle | None = None
    _head_bytes = 0
    _head_too_large = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Wrap the connection's transport; start the clock for the first headers."""
        holding: Any = HeadHoldingTransport(transport)
        super().connection_made(holding)
        self._start_header_clock()
        instruments().connection(+1)

    def _start_header_clock(self) -> None:
        timeout = getattr(self.config, "header_timeout", None)
        if timeout and self._header_timer is None:
            self._header_timer = self.loop.call_later(timeout, self._headers_too_slow)

    def _stop_header_clock(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        self.transport.close()

    def on_message_begin(self) -> None:
        """A request begins: its headers must be complete within the timeout."""
        super().on_message_begin()
        self._head_bytes = 0
        self._start_header_clock()

    def on_url(self, url: bytes) -> None:
        """Collect the target, counted against :data:`MAX_HEAD_BYTES`."""
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header, counted against :data:`MAX_HEAD_BYTES`."""
        self._count_head(len(name) + len(value))
        super().on_header(name, value)

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            self._head_too_large = True
            # httptools turns a callback's exception into an HttpParserError, which
            # uvicorn answers through send_400_response below
            raise ValueError("request head too large")

    def send_400_response(self, msg: str) -> None:
        """Answer a request the parser refused: 431 JSON when its head was too large."""
        if not self._head_too_large:
            super().send_400_response(msg)
            return
        self.transport.write(_HEAD_TOO_LARGE % (len(_HEAD_TOO_LARGE_BODY), _HEAD_TOO_LARGE_BODY))
        self.transport.close()

    def on_headers_complete(self) -> None:
        """The headers arrived in time: stop the clock, serve as uvicorn does."""
        self._stop_header_clock()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock of a connection that is gone."""
        self._stop_header_clock()
        instruments().connection(-1)
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """Graceful shutdown: drop an idle connection now, let a request in flight finish.

        uvicorn closes an idle keep-alive connection with a TLS ``close_notify`` and then
        waits for the client's own, which an idle pooled client never sends (it reads
        nothing until its next request): the server waited the full graceful timeout
        (30 s) for every such connection before it could exit. An idle connection
        carries nothing to lose, so it is dropped at once.
        """
        if self.cycle is None or self.cycle.response_complete:
            self.transport.abort()
        else:
            super().shutdown()

    def on_response_complete(self) -> None:
        """Send the head of a response without body parts, then go on as uvicorn does."""
        transport: Any = self.transport
        transport.flush()
        super().on_response_complete()
