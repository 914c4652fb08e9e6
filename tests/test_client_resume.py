"""The remote change feed survives its server being killed: it connects again with
``Last-Event-ID`` and delivers what was written meanwhile, nothing twice.

A real ``docbase serve`` (SQLite) is SIGKILLed under an open feed and started again on
the same port and data; a write made before the client has reconnected must still
arrive, from the durable change log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import docbase
from tests.test_serve_harness import kill, launch, run_cli


async def test_the_feed_resumes_after_the_server_is_killed(tmp_path: Path) -> None:
    first = launch(tmp_path)
    port = first.port
    first.stop()
    run_cli(tmp_path, "settings", "set", "realtime.global", "true")
    server = launch(tmp_path, port=port)
    try:
        async with await docbase.connect(server.url, apikey=server.admin_key,
                                         verify=server.data_dir / "cert.pem") as db:
            notes = db.collection("notes")
            feed = db.changes()
            first_change = asyncio.ensure_future(anext(feed))
            await asyncio.sleep(0.5)  # the stream is open before the write
            before = await notes.insert({"n": 1})
            got = await asyncio.wait_for(first_change, 10)
            assert (got.event, got.data["_id"]) == ("post", before["_id"])

            kill(server)
            server = launch(tmp_path, port=port)
            after = await notes.insert({"n": 2})  # the feed has not reconnected yet
            again = await asyncio.wait_for(anext(feed), 60)
            await feed.aclose()
        assert (again.event, again.collection, again.data["_id"]) == (
            "post", "notes", after["_id"])
        assert again.id != got.id
    finally:
        server.stop()
