"""``docbase/testing/loopback.py``: a held port is refused to everyone but our servers.

The restart tests rely on it (``docs/testing.md``): while held, connecting is refused
as to a stopped server, ``bind(0)`` never hands the port out, a socket that binds it
without ``SO_REUSEADDR`` is refused, and a server binding with it (as asyncio, uvicorn,
Node.js and PostgreSQL do) listens and is stopped and started again on it.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from docbase.testing.loopback import HOST, accepts_connections, held_port


def _bind(port: int, *, reuse: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuse:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    return sock


def test_a_held_port_is_closed_and_given_to_no_other_socket() -> None:
    with held_port() as port:
        assert not accepts_connections(port)
        with pytest.raises(OSError, match="Address already in use"):
            _bind(port, reuse=False)
        handed: set[int] = set()
        for _ in range(2_000):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
                other.bind((HOST, 0))
                handed.add(other.getsockname()[1])
        assert port not in handed
    with _bind(port, reuse=False) as released:  # let go: anyone's
        assert released.getsockname() == (HOST, port)


async def test_a_server_listens_on_a_held_port_again_after_a_stop() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"up")
        await writer.drain()
        writer.close()

    with held_port() as port:
        for _ in range(2):  # started, stopped, started again on the same port
            server = await asyncio.start_server(answer, HOST, port)
            reader, writer = await asyncio.open_connection(HOST, port)
            assert await reader.read() == b"up"
            writer.close()
            await writer.wait_closed()
            server.close()
            await server.wait_closed()
            assert not await asyncio.to_thread(accepts_connections, port)
