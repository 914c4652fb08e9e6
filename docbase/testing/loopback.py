"""Loopback networking for tests and benchmarks: free ports, listeners answering.

The one place the test suite, :mod:`docbase.testing.mongo_wire` and the scripts in
``benchmarks/`` pick a port for a server they start::

    port = free_port()
    process = subprocess.Popen(["some-server", "--port", str(port)])

A port free now may be taken by another process before the server binds it (several
test runs share a machine): callers that can tell that case apart start again on a new
port. A caller that must start a server again on the same port (after stopping or
killing it, while its clients keep the address) holds the port instead
(:func:`held_port`): bound, never listening, so the kernel hands it to no other socket,
and a connection to it is refused as to a stopped server, while the servers the tests
start, which all bind with ``SO_REUSEADDR`` (asyncio, uvicorn, Node.js, PostgreSQL), can
listen on it. Only the standard library is used here.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

__all__ = ["HOST", "accepts_connections", "free_port", "held_port"]

HOST = "127.0.0.1"
"""The loopback interface test servers listen on."""


def free_port(host: str = HOST) -> int:
    """Return a TCP port on ``host`` that no socket is bound to right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def held_port(host: str = HOST) -> Iterator[int]:
    """A port of ``host`` no other process gets until the block ends; servers may listen.

    Linux lets a socket bind an address that others are bound to when every one of them
    set ``SO_REUSEADDR`` and none listens; a bound socket is never handed out by
    ``bind(0)`` or as a connection's local port.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        yield sock.getsockname()[1]


def accepts_connections(port: int, host: str = HOST) -> bool:
    """Return whether something accepts TCP connections on ``host:port`` right now."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False

