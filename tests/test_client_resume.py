"""The remote client when its server is SIGKILLed: the change feed connects again with
``Last-Event-ID`` and delivers what was written meanwhile; writes, sent again across
the restart, are stored exactly once.

A real ``docbase serve`` (SQLite, and PostgreSQL for the writes) is killed and started
again on the same port and storage.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

import docbase
from docbase.client import Retries
from docbase.testing.loopback import held_port
from tests.test_crash_recovery import storage  # noqa: F401  # the fixture: both engines
from tests.test_serve_harness import kill, launch, run_cli


async def test_the_feed_resumes_after_the_server_is_killed(tmp_path: Path) -> None:
    with held_port() as port:
        first = launch(tmp_path, port=port)
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


KILLS = 3
WRITERS = 3


async def test_writes_under_kills_are_stored_exactly_once_with_the_default_retries(
        tmp_path: Path, storage: str) -> None:  # noqa: F811
    """SIGKILL the server at random moments under clients writing one document at a
    time, and start it again on the same port and storage while their writes wait to
    be sent again: no write fails, and every write is stored once, none twice (a retry
    carries its ``Idempotency-Key``, and replays the answer a kill lost). Only the pauses
    are longer than the default, to span a restart; ``retry_writes`` is the default.
    tests/test_client_retries.py loses answers after the commit on purpose."""
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    with held_port() as port:
        server = launch(tmp_path, "--storage", storage, port=port)
        done: list[tuple[int, int]] = []
        stop = asyncio.Event()
        try:
            async with await docbase.connect(server.url, apikey=server.admin_key,
                                             verify=server.data_dir / "cert.pem",
                                             retries=Retries(attempts=10, backoff=0.1)) as db:
                notes = db.collection("notes")

                async def write(writer: int) -> None:
                    seq = 0
                    while not stop.is_set():
                        await notes.insert({"writer": writer, "seq": seq})
                        done.append((writer, seq))
                        seq += 1

                writers = asyncio.gather(*(write(w) for w in range(WRITERS)))
                for _ in range(KILLS):
                    await asyncio.sleep(rng.uniform(0.5, 1.5))
                    await asyncio.to_thread(kill, server)
                    server = await asyncio.to_thread(launch, tmp_path, "--storage", storage,
                                                     port=port)
                await asyncio.sleep(0.5)
                stop.set()
                await asyncio.wait_for(writers, 120)
                stored = await notes.find(h={"$max": 10_000})
        finally:
            server.stop()
        counts = Counter((document["writer"], document["seq"]) for document in stored)
        assert len(done) > WRITERS * KILLS, seed
        assert counts == Counter(done), seed  # each write reported done once, no other
