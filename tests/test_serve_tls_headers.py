"""``docbase serve``'s TLS policy, its response headers and slow clients, over real TLS.

TLS 1.2 or later only, with forward-secret AEAD cipher suites only; HSTS, ``nosniff``
and no server product or version on every answer; and 200 clients trickling their
headers neither delay a normal request nor keep their connections past
``--header-timeout``.
"""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Iterator

import pytest

from tests.raw_https import connect, exchange, read_response, request_bytes
from tests.test_serve_harness import Served, serving

HEADER_TIMEOUT = 2.0
SLOW_CLIENTS = 200


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("tls")
    with serving(directory, "--header-timeout", str(HEADER_TIMEOUT)) as server:
        yield server


def _client(served: Served, *, minimum: ssl.TLSVersion, maximum: ssl.TLSVersion,
            ciphers: str | None = None) -> ssl.SSLContext:
    context = served.ssl_context()
    context.minimum_version = minimum
    context.maximum_version = maximum
    if ciphers is not None:
        context.set_ciphers(ciphers)
    return context


def _handshake(served: Served, context: ssl.SSLContext) -> ssl.SSLSocket:
    return connect(served.port, context, timeout=10)


def _assert_server_refused(error: ssl.SSLError) -> None:
    """The server ended the handshake: with an alert, or (asyncio's TLS, which does not
    flush the alert OpenSSL wrote before closing) by closing the connection. A client
    that could not offer the version or cipher fails before sending anything, with
    neither (e.g. NO_PROTOCOLS_AVAILABLE)."""
    assert isinstance(error, ssl.SSLEOFError) or "ALERT" in str(error), error


# the client must offer what Python deprecates, to see the server refuse it
@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1],
                         ids=["TLSv1.0", "TLSv1.1"])
def test_tls_before_1_2_is_refused(served: Served, version: ssl.TLSVersion) -> None:
    context = _client(served, minimum=version, maximum=version, ciphers="ALL:@SECLEVEL=0")
    with pytest.raises(ssl.SSLError) as refused:
        _handshake(served, context).close()
    _assert_server_refused(refused.value)


@pytest.mark.parametrize("cipher", ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA384",
                                    "ECDHE-ECDSA-AES128-SHA256"])
def test_tls_1_2_cbc_ciphers_are_refused(served: Served, cipher: str) -> None:
    context = _client(served, minimum=ssl.TLSVersion.TLSv1_2,
                      maximum=ssl.TLSVersion.TLSv1_2, ciphers=f"{cipher}:@SECLEVEL=0")
    with pytest.raises(ssl.SSLError) as refused:
        _handshake(served, context).close()
    _assert_server_refused(refused.value)


@pytest.mark.parametrize(("version", "cipher"), [
    (ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-GCM-SHA256"),
    (ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    (ssl.TLSVersion.TLSv1_3, None),
])
def test_tls_1_2_aead_and_tls_1_3_are_served(
    served: Served, version: ssl.TLSVersion, cipher: str | None
) -> None:
    context = _client(served, minimum=version, maximum=version, ciphers=cipher)
    with _handshake(served, context) as conn:
        assert conn.version() == {ssl.TLSVersion.TLSv1_2: "TLSv1.2",
                                  ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version]
        negotiated = conn.cipher()
        assert negotiated is not None
        assert "GCM" in negotiated[0] or "CHACHA20" in negotiated[0], negotiated
        conn.sendall(request_bytes("GET", "/health"))
        assert read_response(conn).status == 200


@pytest.mark.parametrize(("path", "status"), [
    ("/health", 200), ("/rest/people", 401), ("/no/such/route", 404),
])
def test_every_answer_carries_hsts_nosniff_and_no_version(
    served: Served, path: str, status: int
) -> None:
    answer = served.request("GET", path)
    assert answer.status_code == status
    assert answer.headers["strict-transport-security"] == "max-age=31536000"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers.get_list("server") == ["docbase"]


def test_a_document_answer_carries_the_headers_too(served: Served) -> None:
    created = served.request("POST", "/rest/people", key=served.admin_key, json={"a": 1})
    assert created.status_code == 201
    assert created.headers["x-content-type-options"] == "nosniff"
    assert created.headers["strict-transport-security"].startswith("max-age=")
    assert not any(word in created.headers.get("server", "").lower()
                   for word in ("granian", "uvicorn", "python", "litestar", "/"))


def _trickle(conns: list[ssl.SSLSocket]) -> None:
    for conn in conns:
        with contextlib.suppress(OSError):
            conn.sendall(b"x")


def test_slow_clients_neither_delay_a_request_nor_outstay_the_header_timeout(
    served: Served,
) -> None:
    context = served.ssl_context()
    slow: list[ssl.SSLSocket] = []
    try:
        for _ in range(SLOW_CLIENTS):
            conn = connect(served.port, context, timeout=10)
            conn.sendall(b"GET /rest/people HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
            slow.append(conn)
        opened = time.monotonic()
        _trickle(slow)
        started = time.monotonic()
        answer = exchange(served.port, context, request_bytes(
            "GET", "/rest/people", {"x-apikey": served.admin_key}), timeout=10)
        took = time.monotonic() - started
        assert answer.status == 200
        assert took < 5, f"a normal request took {took:.2f} s among {SLOW_CLIENTS} slow ones"

        # past the header timeout the server closes them (or answers 408), never serves
        time.sleep(max(0.0, opened + HEADER_TIMEOUT + 3 - time.monotonic()))
        _trickle(slow)
        closed = 0
        for conn in slow:
            conn.settimeout(5)
            try:
                data = conn.recv(4096)
            except (ssl.SSLError, ConnectionResetError):
                data = b""
            except TimeoutError:
                continue
            if data == b"" or data.startswith(b"HTTP/1.1 408"):
                closed += 1
        assert closed == SLOW_CLIENTS, f"only {closed} of {SLOW_CLIENTS} slow clients cut off"
    finally:
        for conn in slow:
            conn.close()



