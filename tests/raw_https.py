"""Send bytes no HTTP client would send (NUL in a path, lying headers) over real TLS.

:func:`exchange` writes one request, exactly as given, on a fresh TLS connection that
trusts the server's own certificate, and reads one response with ``h11`` (the parser
``httpx`` itself uses), so the test sees what the server answered and nothing that a
client library corrected on the way.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from typing import NamedTuple

import h11


class RawResponse(NamedTuple):
    """A response read off the wire: status, lower-cased headers, body."""

    status: int
    headers: dict[str, str]
    body: bytes


def connect(port: int, context: ssl.SSLContext, *, timeout: float = 15) -> ssl.SSLSocket:
    """Open a TLS connection to ``127.0.0.1:port``."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def request_bytes(method: str, target: str, headers: dict[str, str] | None = None,
                  body: bytes = b"") -> bytes:
    """Lay out a request as given (``target`` and header values are not checked)."""
    lines = [f"{method} {target} HTTP/1.1", "host: 127.0.0.1", "connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body and not any(name.lower() == "content-length" for name in headers or {}):
        lines.append(f"content-length: {len(body)}")
    return "\r\n".join(lines).encode("utf-8", "surrogateescape") + b"\r\n\r\n" + body


def read_response(conn: ssl.SSLSocket) -> RawResponse:
    """Read one response; a connection closed before a status line raises ``EOFError``."""
    parser = h11.Connection(h11.CLIENT)
    # h11 parses a response only after it has "sent" a request; what was really sent
    # went out raw, so this request exists only to move h11's state along
    parser.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    parser.send(h11.EndOfMessage())
    status, headers, body = 0, {}, bytearray()
    while True:
        event = parser.next_event()
        if event is h11.NEED_DATA:
            try:
                data = conn.recv(65536)
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError, ConnectionResetError):
                data = b""
            if not data and not status:
                raise EOFError("the server closed the connection without answering")
            parser.receive_data(data)
        elif isinstance(event, h11.Response):
            status = event.status_code
            headers = {k.decode().lower(): v.decode("latin-1") for k, v in event.headers}
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            return RawResponse(status, headers, bytes(body))


def exchange(port: int, context: ssl.SSLContext, request: bytes, *,
             timeout: float = 15) -> RawResponse:
    """Send ``request`` exactly as given on a new connection and read the answer.

    A server may answer and close before the whole of a too large request was sent;
    the answer it sent is still read.
    """
    with connect(port, context, timeout=timeout) as conn:
        # refused midway: what it answered (if anything) is read below
        with contextlib.suppress(ssl.SSLError, BrokenPipeError, ConnectionResetError):
            conn.sendall(request)
        return read_response(conn)
