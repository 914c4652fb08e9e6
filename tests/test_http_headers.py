"""``docbase.http.headers.header`` answers as Litestar's ``request.headers.get`` does."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Request

from docbase.http.headers import header

RAW = [(b"host", b"example.com:8443"), (b"x-apikey", b"first"), (b"X-ApiKey", b"second"),
       (b"accept", b"application/x-ndjson"), (b"x-name", "caf\u00e9".encode("latin-1")),
       (b"origin", b"")]


def _request() -> Request[Any, Any, Any]:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": list(RAW),
                    "query_string": b"", "root_path": "", "state": {}})  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["host", "x-apikey", "accept", "x-name", "origin",
                                  "authorization"])
def test_a_header_is_what_litestar_reads(name: str) -> None:
    request = _request()
    assert header(request, name) == _request().headers.get(name)


def test_the_first_of_repeated_headers_is_kept_whatever_the_case() -> None:
    assert header(_request(), "x-apikey") == "first"


def test_a_missing_header_gives_the_default() -> None:
    request = _request()
    assert header(request, "authorization") is None
    assert header(request, "authorization", "") == ""
    assert header(request, "origin", "x") == ""  # present but empty is not missing


def test_headers_are_read_once_a_request() -> None:
    request = _request()
    assert header(request, "host") == "example.com:8443"
    request.scope["headers"].append((b"late", b"1"))  # read already: not seen
    assert header(request, "late") is None
