"""A full SQLite database refuses writes clearly, keeps reads and every earlier write.

``PRAGMA max_page_count`` on every connection caps the database file: past it SQLite
fails a write with ``SQLITE_FULL`` ("database or disk is full"), the very error a full
disk gives, without needing a small file system. The database is served over real
HTTPS; the cap is the only thing the test adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event

from docbase.adapters.sql import SqlBlobStore, SqlDocumentStore, create_engine
from docbase.core.database import Database
from docbase.http.testing import live_docbase

PAGES = 120
"""The cap, in pages of 4 KiB: room for the layout, a key and a few hundred documents."""
TEXT = "x" * 1500


async def test_full_sqlite_refuses_writes_with_503_keeps_reads_and_recovers_after_deletes(
    tmp_path: Path,
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/full.db")

    @event.listens_for(engine, "connect")
    def cap(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {PAGES}")

    database = Database(SqlDocumentStore(engine, owns_engine=True), SqlBlobStore(engine))
    async with database, live_docbase({"main": database}, tmp_path) as live:
        client, headers = live.client, live.auth()
        stored: list[dict[str, Any]] = []
        while True:
            reply = await client.post("/rest/items", json={"i": len(stored), "text": TEXT},
                                      headers=headers)
            if reply.status_code != 201:
                break
            stored.append(reply.json())
            assert len(stored) < 5000, "the database never filled up"
        assert len(stored) > 10
        assert reply.status_code == 503, reply.text
        assert reply.json()["name"] == "BackendError"
        assert "full" in reply.json()["message"]
        assert int(reply.headers["retry-after"]) > 0

        batch = [{"batch": True, "text": TEXT} for _ in range(20)]
        refused = await client.post("/rest/items", json=batch, headers=headers)
        assert refused.status_code == 503, refused.text

        listed = await client.get("/rest/items", params={"max": 10000, "metafields": "true"},
                                  headers=headers)
        assert listed.status_code == 200, listed.text
        assert listed.json() == stored  # every acknowledged write, nothing of the batch
        one = await client.get(f"/rest/items/{stored[0]['_id']}", headers=headers)
        assert one.json() == {"_id": stored[0]["_id"], "i": 0, "text": TEXT}

        doomed = [d["_id"] for d in stored[:5]]
        deleted = await client.request("DELETE", "/rest/items/*", json=doomed, headers=headers)
        assert deleted.json() == {"result": doomed}
        again = await client.post("/rest/items", json={"i": -1, "text": TEXT}, headers=headers)
        assert again.status_code == 201, again.text
