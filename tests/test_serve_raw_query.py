"""Clients of the original service send ``q``, ``h`` and ``sort`` unencoded.

curl ``-g``, Node's ``http.request`` and hand-written scripts put raw ``"`` (and ``{``,
``}``, ``$``) in the query string. The original service's front end answers them, so
``docbase serve`` must too: these tests send such a request line byte for byte over a
raw TLS socket, so that no client library encodes it first.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.test_serve_harness import Served, serving


def raw_get(served: Served, target: str, key: str) -> tuple[int, bytes]:
    """Send ``GET target`` exactly as written; return the status and the body."""
    request = (f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-apikey: {key}\r\n"
               "Connection: close\r\n\r\n").encode()
    raw = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    with served.ssl_context().wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(request)
        answer = b""
        while chunk := tls.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, body


def test_raw_double_quotes_in_q_h_and_sort_are_answered(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        key = served.admin_key
        created = served.request("POST", "/rest/people", key=key, json=[
            {"name": "Joe", "age": 30}, {"name": "Ann", "age": 40}, {"name": "Joe", "age": 20}])
        assert created.status_code == 201, created.text
        target = ('/rest/people?q={"name":"Joe"}&h={"$orderby":{"age":1},"$fields":{"age":1}}'
                  '&sort="age"')
        assert '"' in target
        status, body = raw_get(served, target, key)
        assert status == 200, body
        assert [d["age"] for d in json.loads(body)] == [20, 30]


def test_raw_quotes_answer_what_the_encoded_query_answers(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        key = served.admin_key
        served.request("POST", "/rest/items", key=key,
                       json=[{"n": i, "tag": "a b" if i % 2 else "c"} for i in range(6)])
        raw_status, raw_body = raw_get(served, '/rest/items?q={"tag":"c"}&sort=n&dir=-1', key)
        encoded = served.request("GET", "/rest/items", key=key,
                                 params={"q": '{"tag":"c"}', "sort": "n", "dir": "-1"})
        assert raw_status == 200, raw_body
        assert json.loads(raw_body) == encoded.json()
        assert [d["n"] for d in encoded.json()] == [4, 2, 0]
