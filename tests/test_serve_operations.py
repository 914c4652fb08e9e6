"""What an operator's tools read from a real ``docbase serve --workers 2``.

One server (plain HTTP behind a trusted proxy on loopback, so that ``X-Request-Id`` is
believed; JSON logs; metrics behind a token) is loaded with requests on fresh
connections until both workers have answered, and then:

- one scrape of ``GET /metrics`` counts every request, whichever worker served it (as
  of at most a second ago: each worker adds its tallies to the shared files every
  second), and the latency histograms have moved by as many observations;
- every line of the server's output parses as JSON, and the access lines carry the
  request id the client sent (returned in ``X-Request-Id`` too) or one made up;
- ``GET /metrics`` without the token, or with a wrong one, is refused;
- neither the logs nor the metrics contain a key, token or password of the test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.test_serve_harness import Served, launch, run_cli

METRICS_TOKEN = "metrics-token-7d1f0c2a9be84e55"
PASSWORD = "a long and secret passphrase"
PROXY = {"x-forwarded-proto": "https"}
ROUND = 24
"""Requests sent per round, each on a connection of its own."""
FLUSHED_WITHIN = 5.0
"""Seconds until a scrape counts every request (workers add their tallies every second)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cwd = tmp_path_factory.mktemp("operations")
    server = launch(cwd, "--workers", "2", "--proxy-headers", "--log-format", "json",
                    "--metrics-token", METRICS_TOKEN, scheme="http")
    try:
        yield server
    finally:
        server.stop()


def fresh(served: Served, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request on a new connection (so the kernel may hand it to either worker)."""
    headers = {**PROXY, **kwargs.pop("headers", {})}
    with httpx.Client(base_url=served.url, timeout=10) as client:
        return client.request(method, path, headers=headers, **kwargs)


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(served: Served) -> Samples:
    answer = fresh(served, "GET", "/metrics",
                   headers={"authorization": f"Bearer {METRICS_TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.text)
            for sample in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def log_lines(served: Served) -> list[dict[str, Any]]:
    lines = [line for line in served.output().splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line is JSON, or this fails


def access_lines(served: Served, until: Callable[[list[dict[str, Any]]], bool] = bool,
                 ) -> list[dict[str, Any]]:
    """The access lines written so far, once ``until`` holds of them (within 5 s).

    A worker writes the lines of its event loop a moment later, together
    (``docbase.http.logs.BatchingStreamHandler``), so a test waits for the ones it needs.
    """
    deadline = time.monotonic() + 5
    while True:
        lines = [line for line in log_lines(served) if line["logger"] == "docbase.access"]
        if until(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_one_scrape_counts_the_requests_of_both_workers(served: Served) -> None:
    key = served.admin_key
    route = "/rest/{collection}"
    before = scrape(served)
    sent, pids = 0, set()
    for _round in range(10):  # bounded: the kernel spreads fresh connections over both
        for i in range(ROUND):
            method, body = ("POST", {"n": i}) if i % 3 == 0 else ("GET", None)
            answer = fresh(served, method, "/rest/counted", headers={"x-apikey": key},
                           json=body)
            assert answer.status_code in (200, 201), answer.text
        sent += ROUND
        written = sent  # every request's line, before asking which workers served them
        pids = {line["pid"] for line in access_lines(
            served, lambda lines, n=written: sum(line["route"] == route for line in lines) >= n)
            if line["route"] == route}
        if len(pids) == 2:
            break
    assert len(pids) == 2, "every request went to one worker"
    posts = sent // 3
    gets = sent - posts

    latency = "docbase_http_request_duration_seconds"

    def counted(after: Samples) -> dict[str, float]:
        """Requests counted and request durations observed since ``before``, by method.

        A scrape reads each worker's metric files one after another while the other
        worker may be adding its tallies, so one scrape can hold a worker's new request
        count beside its old durations: both are waited for.
        """
        return {**{method: value(after, "docbase_http_requests_total", route=route,
                                 method=method, status="2xx")
                   - value(before, "docbase_http_requests_total", route=route, method=method,
                           status="2xx") for method in ("GET", "POST")},
                **{f"{method} timed": value(after, f"{latency}_count", route=route,
                                            method=method)
                   - value(before, f"{latency}_count", route=route, method=method)
                   for method in ("GET", "POST")}}

    wanted = {"GET": gets, "POST": posts, "GET timed": gets, "POST timed": posts}
    deadline = time.monotonic() + FLUSHED_WITHIN  # each worker adds its tallies every second
    while counted(after := scrape(served)) != wanted:
        assert time.monotonic() < deadline, f"{counted(after)}, wanted {wanted}"
        time.sleep(0.2)

    for method, count in (("GET", gets), ("POST", posts)):
        assert (value(after, f"{latency}_sum", route=route, method=method)
                > value(before, f"{latency}_sum", route=route, method=method))
        assert (value(after, f"{latency}_bucket", route=route, method=method, le="+Inf")
                - value(before, f"{latency}_bucket", route=route, method=method, le="+Inf")
                == count)
    store = "docbase_store_operation_duration_seconds_count"
    assert (value(after, store, kind="insert", engine="sqlite")
            - value(before, store, kind="insert", engine="sqlite")) >= posts
    assert value(after, "docbase_store_up", database="docbase") == 1
    # the change log is written only while someone reads it: here nobody does
    assert ("docbase_change_feed_position", (("database", "docbase"),)) in after


def test_access_lines_carry_the_request_id_the_proxy_sent(served: Served) -> None:
    sent = fresh(served, "GET", "/rest/traced/0123456789abcdef01234567",
                 headers={"x-apikey": served.admin_key, "x-request-id": "trace-4f2a-1"})
    assert sent.status_code == 404
    assert sent.headers["x-request-id"] == "trace-4f2a-1"
    made = fresh(served, "GET", "/health")
    made_id = made.headers["x-request-id"]
    assert made_id
    assert made_id != "trace-4f2a-1"

    lines = access_lines(served, lambda lines: {made_id, "trace-4f2a-1"} <= {
        line.get("request_id") for line in lines})
    traced = [line for line in lines if line.get("request_id") == "trace-4f2a-1"]
    assert len(traced) == 1
    assert traced[0]["route"] == "/rest/{collection}/{document_id}"
    assert traced[0]["status"] == 404
    assert traced[0]["principal"] == "full-access key"
    assert traced[0]["bytes"] == len(sent.content)
    assert traced[0]["duration_ms"] > 0
    assert [line["route"] for line in lines if line.get("request_id") == made_id] == [
        "/health"]


def test_metrics_without_the_token_are_refused(served: Served) -> None:
    assert fresh(served, "GET", "/metrics").status_code == 401
    wrong = fresh(served, "GET", "/metrics",
                  headers={"authorization": f"Bearer {METRICS_TOKEN}x"})
    assert wrong.status_code == 401
    assert wrong.json()["name"] == "Unauthorized"
    assert "docbase_http_requests_total" not in wrong.text


def test_no_key_token_or_password_reaches_the_logs_or_the_metrics(served: Served) -> None:
    key = served.admin_key
    run_cli(served.cwd, "users", "create", "--email", "ops@example.com", "--password",
            PASSWORD)
    login = fresh(served, "POST", "/auth/login",
                  json={"email": "ops@example.com", "password": PASSWORD})
    assert login.status_code == 200, login.text
    token = login.json()["jwt"]
    assert fresh(served, "GET", "/rest/secrets", params={"apikey": key}).status_code == 200
    assert fresh(served, "GET", "/rest/secrets", params={"jwt": token}).status_code == 200
    assert fresh(served, "GET", "/rest/secrets",
                 headers={"authorization": f"Bearer {token}"}).status_code == 200
    assert fresh(served, "GET", "/rest/secrets", params={"apikey": key + "0"}).status_code == 401
    assert fresh(served, "GET", "/metrics", params={"apikey": key}).status_code == 401
    metrics = fresh(served, "GET", "/metrics",
                    headers={"authorization": f"Bearer {METRICS_TOKEN}"}).text
    access_lines(served, lambda lines: any(line["route"] == "/metrics" for line in lines))
    output = served.output()

    secrets = {"admin key": key, "token": token, "token signature": token.rsplit(".", 1)[1],
               "password": PASSWORD, "metrics token": METRICS_TOKEN}
    for where, text in {"log": output, "metrics": metrics}.items():
        for name, secret in secrets.items():
            assert secret not in text, f"the {name} appears in the {where}"
    assert "docbase.access" in output
    assert "docbase_http_requests_total" in metrics


def test_an_ungranted_address_without_token_gets_no_metrics(tmp_path: Path) -> None:
    server = launch(tmp_path, "--metrics-address", "10.0.0.0/8")
    try:
        refused = server.request("GET", "/metrics")
        assert refused.status_code == 401
    finally:
        server.stop()
    # every line is text, not JSON, by default; the access line names the route
    assert "docbase.access" in server.output()
    assert "GET /metrics 401" in server.output()
