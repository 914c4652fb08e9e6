"""The server protocol sends a response's head with its body, and stays correct HTTP/1.1.

A real uvicorn server on loopback (the protocol ``docbase serve`` runs) answers a small
ASGI app; the requests are written byte for byte on raw sockets.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from docbase.http.coalescing import CoalescingHttpProtocol, HeadHoldingTransport
from docbase.testing.loopback import free_port


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for part in (b"one,", b"two,", b"three"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
            await asyncio.sleep(0.01)
        await send({"type": "http.response.body", "body": b""})
        return
    if scope["path"] == "/empty":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    answer = b"echo:" + scope["path"].encode() + b":" + body
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(answer)).encode())]})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    free = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=free, http=CoalescingHttpProtocol,
                            loop="uvloop", lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield free
    server.should_exit = True
    thread.join(10)


def exchange(port: int, data: bytes, *, until: bytes, pause_after: bytes | None = None,
             rest: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        received = b""
        if pause_after is not None:
            while pause_after not in received:
                received += sock.recv(65536)
            sock.sendall(rest)
        while until not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def test_head_and_body_answer_in_one_piece(port: int) -> None:
    answer = exchange(port, b"GET /one HTTP/1.1\r\nHost: x\r\n\r\n", until=b"echo:/one:")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"\r\n\r\necho:/one:")


def test_pipelined_requests_answer_in_order(port: int) -> None:
    requests = b"".join(f"GET /{n} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for n in range(3))
    answer = exchange(port, requests, until=b"echo:/2:")
    assert answer.count(b"HTTP/1.1 200 OK") == 3
    assert answer.index(b"echo:/0:") < answer.index(b"echo:/1:") < answer.index(b"echo:/2:")


def test_head_request_gets_its_head_without_a_body(port: int) -> None:
    answer = exchange(port, b"HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n", until=b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 8" in answer.lower()
    assert answer.endswith(b"\r\n\r\n")


def test_response_without_body_parts_is_sent(port: int) -> None:
    answer = exchange(port, b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n", until=b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 204 No Content\r\n")


def test_expect_100_continue_is_answered_before_the_body_arrives(port: int) -> None:
    head = (b"POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
            b"Expect: 100-continue\r\n\r\n")
    answer = exchange(port, head, pause_after=b"100 Continue\r\n\r\n", rest=b"hello",
                      until=b"echo:/up:hello")
    assert answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")


def test_streamed_body_arrives_whole(port: int) -> None:
    answer = exchange(port, b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", until=b"0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked" in answer.lower()
    for part in (b"one,", b"two,", b"three"):
        assert part in answer


def test_malformed_request_is_answered_400_and_closed(port: int) -> None:
    answer = exchange(port, b"GET /x HTTP/1.1\r\nHost x\r\n\r\n", until=b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")


class _Recording:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0


def test_transport_joins_head_and_first_body_part() -> None:
    recording = _Recording()
    transport = HeadHoldingTransport(recording)  # type: ignore[arg-type]
    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert recording.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    transport.write(b"ok")
    transport.write(b"more")
    assert recording.writes[1:] == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", b"more"]
    assert transport.get_write_buffer_size() == 0  # everything else is the transport's
    transport.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    transport.close()
    assert recording.writes[-1] == b"HTTP/1.1 400 Bad Request\r\n\r\n"
    assert recording.closed
