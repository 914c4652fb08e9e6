"""A real HTTP webhook receiver on loopback (no tests here), for the webhook tests.

It records every request and answers with the statuses it is told, in order (200 once
they run out).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class Received(NamedTuple):
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """What the receiver got, and what it answers next."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/hook"
        self.received: list[Received] = []
        self.answers: list[int] = []
        self.always: int = 200
        self.arrived = threading.Condition()

    def record(self, request: Received) -> int:
        """Keep ``request``; return the status to answer it with."""
        with self.arrived:
            self.received.append(request)
            self.arrived.notify_all()
        return self.answers.pop(0) if self.answers else self.always

    async def wait_for(self, count: int, within: float = 20.0) -> list[Received]:
        """Wait until ``count`` requests arrived; return them."""
        def wait() -> bool:
            with self.arrived:
                return self.arrived.wait_for(lambda: len(self.received) >= count, within)

        if not await asyncio.to_thread(wait):
            raise TimeoutError(f"{len(self.received)} of {count} requests within {within} s")
        return list(self.received)


@contextlib.contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    """Serve a receiver on a free loopback port for the duration of the block."""
    receiver: Receiver | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            assert receiver is not None
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = receiver.record(Received(self.path, headers, body))
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
