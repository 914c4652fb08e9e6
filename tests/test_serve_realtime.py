"""``GET /realtime`` across real ``docbase serve`` processes sharing PostgreSQL."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx
import pytest

from docbase.testing.sse import open_events
from tests.test_serve_harness import run_cli, serving

pytestmark = pytest.mark.postgres

HANG = 30.0
"""Seconds after which an event not yet delivered counts as never delivered: a deadline
for a hang only, as a loaded machine (the suite's parallel workers) may delay any event;
how soon events arrive is measured by ``benchmarks/realtime_bench.py``, not asserted."""


def test_a_write_through_one_server_reaches_a_subscriber_of_another(
    tmp_path: Path, schema_url: str,
) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    run_cli(first_dir, "settings", "set", "--storage", schema_url, "realtime.global", "true")
    with (serving(first_dir, "--storage", schema_url) as first,
          serving(second_dir, "--storage", schema_url) as second):
        key = first.admin_key
        delivered = asyncio.run(_deliveries(first.url, first.ssl_context(), second.url,
                                            second.ssl_context(), key))
    assert delivered == list(range(5))


async def _deliveries(writer_url: str, writer_tls: ssl.SSLContext, reader_url: str,
                      reader_tls: ssl.SSLContext, key: str) -> list[int]:
    """Write five documents through one server; wait for each until the other delivers it."""
    delivered = []
    async with (httpx.AsyncClient(base_url=writer_url, verify=writer_tls, timeout=HANG) as writer,
                httpx.AsyncClient(base_url=reader_url, verify=reader_tls, timeout=30) as reader,
                open_events(reader, "/realtime", params={"apikey": key}) as stream):
        assert (await stream.next()).name == "ping"
        for n in range(5):
            response = await writer.post("/rest/notes", json={"n": n},
                                         headers={"x-apikey": key})
            assert response.status_code == 201, response.text
            event = await stream.next(skip_pings=True, within=HANG)
            assert event.json()["data"] == response.json()
            delivered.append(event.json()["data"]["n"])
            await asyncio.sleep(0.2)  # spread out, as independent writes would be
    return delivered
