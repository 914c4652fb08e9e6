"""``docbase serve`` end to end: the real server as a subprocess, over TLS on loopback."""

from __future__ import annotations

import signal
import socket
import ssl
import stat
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.test_serve_harness import child_env, child_processes, launch, run_cli, serving


def test_first_start_creates_certificate_and_admin_key_then_health_needs_no_key(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as served:
        data = tmp_path / "docbase-data"
        assert stat.S_IMODE((data / "admin.key").stat().st_mode) == 0o600
        assert stat.S_IMODE((data / "key.pem").stat().st_mode) == 0o600
        assert (data / "cert.pem").read_text().startswith("-----BEGIN CERTIFICATE-----")
        # the client verifies the server against the self-signed certificate it made
        health = served.request("GET", "/health")
        assert health.status_code == 200
        assert served.request("GET", "/rest/people").status_code == 401
        listing = served.request("GET", "/rest/people", key=served.admin_key)
        assert listing.status_code == 200, listing.text
        assert listing.json() == []
        banner = served.output()
        assert f"https://127.0.0.1:{served.port}" in banner
        assert "curl --cacert docbase-data/cert.pem" in banner
        assert '-H "x-apikey: $(cat docbase-data/admin.key)"' in banner


def test_admin_key_from_environment_becomes_the_full_access_key(tmp_path: Path) -> None:
    env = child_env(DOCBASE_ADMIN_KEY="operator-chosen-secret-0123456789")
    with serving(tmp_path, env=env) as served:
        assert not (tmp_path / "docbase-data" / "admin.key").exists()
        created = served.request("POST", "/rest/people", key="operator-chosen-secret-0123456789",
                                 json={"name": "Joe"})
        assert created.status_code == 201, created.text
        assert served.request("GET", "/rest/people", key="wrong-key-0123456789").status_code \
            == 401
        assert "DOCBASE_ADMIN_KEY" in served.output()


def test_restart_keeps_key_certificate_and_data(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        key = served.admin_key
        cert = (served.data_dir / "cert.pem").read_bytes()
        assert served.request("POST", "/rest/people", key=key, json={"n": 1}).status_code == 201
    with serving(tmp_path) as served:
        assert served.admin_key == key
        assert (served.data_dir / "cert.pem").read_bytes() == cert
        assert "created" not in served.output()
        assert [d["n"] for d in served.request("GET", "/rest/people", key=key).json()] == [1]


def _read_until_closed(sock: socket.socket, limit: float) -> bytes:
    received = b""
    deadline = time.monotonic() + limit
    sock.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except ConnectionError:
            break
        if not chunk:
            break
        received += chunk
    return received


def test_plain_http_to_the_tls_port_gets_no_http_response(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = _read_until_closed(sock, limit=5)
        assert not answer.startswith(b"HTTP/"), answer
        assert b"200" not in answer
        assert b"status" not in answer
        # and the port still serves TLS afterwards
        assert served.request("GET", "/health").status_code == 200


def test_config_file_sets_port_and_limits(tmp_path: Path) -> None:
    (tmp_path / "docbase.toml").write_text(
        'data_dir = "state"\n\n[limits]\nmax_page = 5\n'
    )
    served = launch(tmp_path, "--config", "docbase.toml",
                    data_dir=tmp_path / "state")
    try:
        key = served.admin_key
        assert served.request("GET", "/rest/people?max=6", key=key).status_code == 400
        assert served.request("GET", "/rest/people?max=5", key=key).status_code == 200
    finally:
        served.stop()
    assert not (tmp_path / "docbase-data").exists()


def test_config_file_unknown_key_is_rejected_naming_the_key(tmp_path: Path) -> None:
    (tmp_path / "docbase.toml").write_text("port = 9443\n\n[limits]\nmax_pages = 5\n")
    result = run_cli(tmp_path, "serve", "--config", "docbase.toml", check=False)
    assert result.returncode == 2
    assert "unknown key 'limits.max_pages'" in result.stderr
    assert not (tmp_path / "docbase-data").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_shutdown_finishes_the_request_in_flight(tmp_path: Path, sig: int) -> None:
    """A request whose body is still arriving when the signal comes is answered."""
    served = launch(tmp_path)
    key = served.admin_key
    body = b'{"name": "in flight", "padding": "' + b"x" * 4000 + b'"}'
    head = (f"POST /rest/people HTTP/1.1\r\nHost: 127.0.0.1\r\nx-apikey: {key}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n").encode()
    context = served.ssl_context()
    raw = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
        sock.sendall(head + body[:100])
        time.sleep(0.5)  # the worker is now reading this request's body
        served.process.send_signal(sig)
        time.sleep(1.0)
        assert served.process.poll() is None, "exited with a request in flight"
        sock.sendall(body[100:])
        answer = _read_until_closed(sock, limit=10)
    assert answer.startswith(b"HTTP/1.1 201"), answer[:200]
    assert b'"name":"in flight"' in answer
    assert served.stop(timeout=20) == 0
    assert "shutdown completed" in served.output().lower()


def test_new_connections_are_refused_after_shutdown(tmp_path: Path) -> None:
    served = launch(tmp_path)
    port = served.port
    assert served.stop() == 0
    with pytest.raises(ConnectionRefusedError), \
            socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_proxy_headers_serve_plain_http_to_trusted_proxy_only(tmp_path: Path) -> None:
    served = launch(tmp_path, "--proxy-headers", scheme="http")
    try:
        key = served.admin_key
        assert not (tmp_path / "docbase-data" / "cert.pem").exists()
        forwarded = served.request("GET", "/rest/people", key=key,
                                   headers={"X-Forwarded-Proto": "https"})
        assert forwarded.status_code == 200, forwarded.text
        direct = served.request("GET", "/rest/people", key=key)
        assert direct.status_code == 403
        assert direct.json() == {"name": "HTTPSRequired", "status": 403,
                                 "message": direct.json()["message"]}
        spoofed_http = served.request("GET", "/rest/people", key=key,
                                      headers={"X-Forwarded-Proto": "http"})
        assert spoofed_http.status_code == 403
        assert served.request("GET", "/health").status_code == 200
    finally:
        served.stop()


def test_proxy_headers_from_an_untrusted_address_are_refused(tmp_path: Path) -> None:
    served = launch(tmp_path, "--proxy-headers",
                    "--trusted-proxy", "10.1.2.3", scheme="http")
    try:
        answer = served.request("GET", "/rest/people", key=served.admin_key,
                                headers={"X-Forwarded-Proto": "https"})
        assert answer.status_code == 403
        assert answer.json()["name"] == "HTTPSRequired"
    finally:
        served.stop()


def test_several_workers_serve_one_database(tmp_path: Path) -> None:
    with serving(tmp_path, "--workers", "2") as served:
        key = served.admin_key
        workers = child_processes(served.process.pid)
        assert len(workers) >= 2, workers
        errors: list[str] = []

        def create(i: int) -> None:
            with httpx.Client(base_url=served.url, verify=served.ssl_context(),
                              timeout=10) as client:
                reply = client.post("/rest/items", json={"i": i}, headers={"x-apikey": key})
                if reply.status_code != 201:
                    errors.append(reply.text)

        threads = [threading.Thread(target=create, args=(i,)) for i in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        items = served.request("GET", "/rest/items", key=key).json()
        assert sorted(d["i"] for d in items) == list(range(20))


def test_tls_certificate_names_loopback_and_localhost(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        context = served.ssl_context()
        for host in ("127.0.0.1", "localhost"):
            raw = socket.create_connection((host, served.port), timeout=5)
            with context.wrap_socket(raw, server_hostname=host) as sock:
                assert sock.version() in ("TLSv1.2", "TLSv1.3")
        raw = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="example.com")
        raw.close()
