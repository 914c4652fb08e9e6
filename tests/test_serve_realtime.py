"""``GET /realtime`` across real ``docbase serve`` processes sharing PostgreSQL."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path

import httpx
import pytest

from docbase.testing.sse import open_events
from tests.test_serve_harness import run_cli, serving

pytestmark = pytest.mark.postgres

PROMISE = 1.0
"""Seconds within which a write through one process reaches a subscriber of another."""


def test_a_write_through_one_server_reaches_a_subscriber_of_another_within_a_second(
    tmp_path: Path, schema_url: str,
) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    run_cli(first_dir, "settings", "set", "--storage", schema_url, "realtime.global", "true")
    with (serving(first_dir, "--storage", schema_url) as first,
          serving(second_dir, "--storage", schema_url) as second):
        key = first.admin_key
        latencies = asyncio.run(_deliveries(first.url, first.ssl_context(), second.url,
                                            second.ssl_context(), key))
    figures = ", ".join(f"{1000 * s:.0f} ms" for s in latencies)
    assert max(latencies) < PROMISE, f"write-to-delivery across processes: {figures}"


async def _deliveries(writer_url: str, writer_tls: ssl.SSLContext, reader_url: str,
                      reader_tls: ssl.SSLContext, key: str) -> list[float]:
    """Write five documents through one server; time each until the other delivers it."""
    latencies = []
    async with (httpx.AsyncClient(base_url=writer_url, verify=writer_tls, timeout=10) as writer,
                httpx.AsyncClient(base_url=reader_url, verify=reader_tls, timeout=30) as reader,
                open_events(reader, "/realtime", params={"apikey": key}) as stream):
        assert (await stream.next()).name == "ping"
        for n in range(5):
            started = time.monotonic()
            response = await writer.post("/rest/notes", json={"n": n},
                                         headers={"x-apikey": key})
            assert response.status_code == 201, response.text
            event = await stream.next(skip_pings=True, within=10)
            latencies.append(time.monotonic() - started)
            assert event.json()["data"] == response.json()
            await asyncio.sleep(0.2)  # spread out, as independent writes would be
    return latencies
