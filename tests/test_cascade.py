"""A cascaded delete is all or nothing: a refusing hook or a crash leaves no orphan.

Deleting a parent plans the deletes of its children (every child collection's
before-hooks run first) and then deletes children and parent in one ``delete_all``:
one transaction on SQL and memory, children first on MongoDB.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path
from typing import Any

import httpx

from docbase import Database, HookPoint, WriteEvent
from docbase.core.errors import Rejected
from tests.test_serve_harness import kill, launch

CHILD_FIELDS = ("notes", "orders", "tasks")


async def test_a_hook_refusing_one_child_collection_deletes_nothing(stores: Any) -> None:
    async with Database(*stores) as db:
        people = db.collection("people")
        joe = await people.insert({"name": "Joe"})
        for field in CHILD_FIELDS:
            await people.children(joe["_id"], field).insert_many([{"n": 1}, {"n": 2}])

        async def refuse(write: WriteEvent) -> None:
            raise Rejected("orders are kept for the accounts")

        # notes come before orders: deleted first by a cascade that runs as it goes
        db.hooks.on(HookPoint.BEFORE_DELETE, refuse, collection="orders")
        try:
            await people.delete(joe["_id"])
        except Rejected:
            pass
        else:
            raise AssertionError("the hook did not refuse the delete")
        assert await people.count() == 1
        for field in CHILD_FIELDS:
            assert len(await people.children(joe["_id"], field).find()) == 2, field


async def test_sigkill_during_a_cascaded_delete_leaves_all_or_nothing(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path}/cascade.db"
    rng = random.Random()
    outcomes = []
    served = await asyncio.to_thread(launch, tmp_path, "--storage", storage)
    try:
        for _ in range(3):
            async with httpx.AsyncClient(base_url=served.url, verify=served.ssl_context(),
                                         timeout=30, headers={"x-apikey": served.admin_key},
                                         ) as client:
                people = await client.post("/rest/people", json={"name": "Joe"})
                parent = people.json()["_id"]
                for field in CHILD_FIELDS:
                    reply = await client.post(f"/rest/people/{parent}/{field}",
                                              json=[{"n": i} for i in range(300)])
                    assert reply.status_code == 201, reply.text
                deleting = asyncio.create_task(client.delete(f"/rest/people/{parent}"))
                await asyncio.sleep(rng.uniform(0.0, 0.1))
                kill(served)
                with contextlib.suppress(httpx.TransportError):
                    answered = await deleting
                    assert answered.status_code == 200, answered.text
            served = await asyncio.to_thread(launch, tmp_path, "--storage", storage)
            found = served.request("GET", f"/rest/people/{parent}", key=served.admin_key)
            counts = [len(served.request("GET", f"/rest/{field}", key=served.admin_key,
                                         params={"q": f'{{"_parent_id": "{parent}"}}',
                                                 "max": 10000}).json())
                      for field in CHILD_FIELDS]
            outcomes.append((found.status_code, counts))
            assert (found.status_code, counts) in ((200, [300] * 3), (404, [0] * 3)), outcomes
    finally:
        served.stop()
    print(f"\ncascaded deletes killed: {outcomes}")
