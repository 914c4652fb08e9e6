"""Loopback networking for tests and benchmarks: free ports, listeners answering.

The one place the test suite, :mod:`docbase.testing.mongo_wire` and the scripts in
``benchmarks/`` pick a port for a server they start::

    port = free_port()
    process = subprocess.Popen(["some-server", "--port", str(port)])

A port free now may be taken by another process before the server binds it (several
test runs share a machine): callers that can tell that case apart start again on a new
port. Only the standard library is used here.
"""

from __future__ import annotations

import socket

__all__ = ["HOST", "accepts_connections", "free_port"]

HOST = "127.0.0.1"
"""The loopback interface test servers listen on."""


def free_port(host: str = HOST) -> int:
    """Return a TCP port on ``host`` that no socket is bound to right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def accepts_connections(port: int, host: str = HOST) -> bool:
    """Return whether something accepts TCP connections on ``host:port`` right now."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False

