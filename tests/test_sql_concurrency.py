"""Concurrent ``$inc`` from two OS processes, each with its own engine, loses nothing."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from docbase.adapters.sql import from_url
from docbase.core.documents import new_document
from tests.backends import sql_url

PROCESSES = 2
INCREMENTS = 25
ROOT = Path(__file__).resolve().parent.parent

# Each worker opens its own stores, says "ready", waits for "go", then runs its
# increments as concurrent tasks, so the two processes' transactions interleave.
WORKER = """
import asyncio, sys
from docbase.adapters.sql import from_url
from docbase.core.update import parse_update

async def main(url, document_id, count):
    store, _ = from_url(url)
    async with store:
        print("ready", flush=True)
        sys.stdin.readline()
        update = parse_update({"$inc": {"n": 1}})
        await asyncio.gather(*(store.update("counters", document_id, update, stamp={})
                               for _ in range(count)))
    print("done", flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with sql_url(request.param, tmp_path) as opened_url:
        yield opened_url


async def test_increments_from_two_processes_all_count(url: str) -> None:
    store, _ = from_url(url)
    async with store:
        counter = new_document({"n": 0}, "api")
        await store.insert("counters", [counter])
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        workers = [
            await asyncio.create_subprocess_exec(
                sys.executable, "-c", WORKER, url, counter["_id"], str(INCREMENTS),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
            for _ in range(PROCESSES)
        ]
        for worker in workers:
            assert worker.stdout is not None
            assert (await asyncio.wait_for(worker.stdout.readline(), 60)).strip() == b"ready"
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(b"go\n")
            await worker.stdin.drain()
        outputs = await asyncio.gather(*(asyncio.wait_for(w.communicate(), 120)
                                         for w in workers))
        assert [w.returncode for w in workers] == [0] * PROCESSES, outputs
        final = await store.get("counters", counter["_id"])
    assert final["n"] == PROCESSES * INCREMENTS
    assert final["_version"] == PROCESSES * INCREMENTS
