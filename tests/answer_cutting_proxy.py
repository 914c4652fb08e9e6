"""A real HTTPS proxy on loopback that loses chosen answers after the server committed.

:class:`AnswerCuttingProxy` stands between the remote client and a served docbase: it
terminates TLS with the server's own certificate, parses each request with h11, sends
it on to the server over TLS, and reads the server's whole answer. For the answers its
``cut`` picks it then closes the client's connection instead of relaying the answer:
the server has run (and, for a keyed write, committed) the request, but the client
sees a connection closed before its answer, the case a retry with the same
``Idempotency-Key`` must not apply twice. Every other answer is relayed as it came.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import h11

Event = h11.Request | h11.Response | h11.Data | h11.EndOfMessage


async def _message(reader: asyncio.StreamReader, conn: h11.Connection) -> list[Event] | None:
    """The events of one whole message ``conn`` reads, or ``None`` if the peer closed."""
    events: list[Event] = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
        elif isinstance(event, h11.ConnectionClosed):
            return None
        elif isinstance(event, h11.Request | h11.Response | h11.Data):
            events.append(event)
        elif isinstance(event, h11.EndOfMessage):
            events.append(event)
            return events


class AnswerCuttingProxy:
    """Forward requests to ``upstream_port``; drop the answers ``cut(n)`` picks (n from 1)."""

    def __init__(self, upstream_port: int, certfile: Path, keyfile: Path,
                 cut: Callable[[int], bool]) -> None:
        self.upstream_port = upstream_port
        self.cut = cut
        self.front = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.front.load_cert_chain(certfile, keyfile)
        self.back = ssl.create_default_context(cafile=str(certfile))
        self.answers = 0
        """Answers the server gave through the proxy."""
        self.answered = asyncio.Event()
        """Set by the first answer."""
        self.cut_paths: list[str] = []
        """The request line of each answer cut (``POST /rest/notes``)."""
        self._exchanges: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        """Each connection's handler and the client's side of it, until it ends."""

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._exchanges[task] = writer
        try:
            up_reader, up_writer = await asyncio.open_connection(
                "127.0.0.1", self.upstream_port, ssl=self.back)
        except BaseException:
            del self._exchanges[task]
            await _close(writer)
            raise
        front, back = h11.Connection(h11.SERVER), h11.Connection(h11.CLIENT)
        try:
            while (request := await _message(reader, front)) is not None:
                for event in request:
                    up_writer.write(back.send(event) or b"")
                await up_writer.drain()
                answer = await _message(up_reader, back)
                if answer is None:
                    return
                self.answers += 1
                self.answered.set()
                if self.cut(self.answers):
                    head = request[0]
                    assert isinstance(head, h11.Request)
                    self.cut_paths.append(f"{head.method.decode()} {head.target.decode()}")
                    return  # the client's connection closes without the answer
                for event in answer:
                    writer.write(front.send(event) or b"")
                await writer.drain()
                front.start_next_cycle()
                back.start_next_cycle()
        finally:
            self._exchanges.pop(task, None)
            await _close(writer)
            await _close(up_writer)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        """Listen on a free loopback port while the block runs; its ``https://`` URL."""
        listener = await asyncio.start_server(self._exchange, "127.0.0.1", 0, ssl=self.front)
        try:
            async with listener:
                yield f"https://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
        finally:
            # connections the client kept alive end with the proxy, not with the event
            # loop (whose end would drop their sockets unclosed)
            handlers = list(self._exchanges)
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close one side of a proxied connection, whatever state its peer left it in."""
    writer.close()
    with contextlib.suppress(OSError, ssl.SSLError, asyncio.CancelledError):
        await writer.wait_closed()
