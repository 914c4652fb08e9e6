"""``docbase migrate --to STORAGE_URL --follow`` as an operator runs it, end to end.

A real ``docbase serve`` on SQLite takes writes over HTTPS throughout (creates, patches,
deletes with their cascade, children, the first child of a new child field); ``docbase
migrate --follow`` copies the database into PostgreSQL in another process and follows
the source's writes; the writes stop, the operator waits for the ``caught up`` line
printed after that moment (``docs/portability.md``), stops the migration with SIGINT,
and the target must hold every acknowledged write and equal the source.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import docbase
from docbase.core.ids import utc_now
from docbase.core.portability.paging import digest_collection, document_id, pages
from docbase.core.query import Eq, Query
from docbase.core.relations import RELATIONS
from tests.test_serve_harness import Served, child_env, docbase_command, launch

pytestmark = pytest.mark.postgres  # never skipped under CI=true (tests/backends.py)

CAUGHT_UP = re.compile(r"caught up with the source at position (\d+) \(its log as of (\S+)\)")
SEED = 120


class Writer:
    """A client writing through the API, remembering what each acknowledged write left."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.key = served.admin_key
        self.rng = random.Random(24)
        self.people: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, tuple[str, dict[str, Any]]] = {}  # id: (parent id, fields)
        self.deleted: set[str] = set()
        self.writes = 0
        self.children = False  # the first child is written once the migration follows
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def call(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        answer = self.served.request(method, path, self.key, json=body)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text)
        self.writes += 1
        return answer.json()

    def seed(self) -> None:
        created = self.call("POST", "/rest/people",
                            [{"name": f"seed {i}", "n": i} for i in range(SEED)], 201)
        for document in created:
            self.people[document["_id"]] = {"name": document["name"], "n": document["n"]}

    def step(self) -> None:
        rng = self.rng
        choice = rng.random()
        n = self.writes
        if choice < 0.3 or len(self.people) < 10:
            body = {"name": f"person {n}", "n": n, "text": "ünïcode ✓"}
            created = self.call("POST", "/rest/people", body, 201)
            self.people[created["_id"]] = body
        elif choice < 0.55:
            person = rng.choice(sorted(self.people))
            self.call("PATCH", f"/rest/people/{person}", {"n": n, "patched": True})
            self.people[person] |= {"n": n, "patched": True}
        elif choice < 0.65:
            person = rng.choice(sorted(self.people))
            self.call("DELETE", f"/rest/people/{person}")
            del self.people[person]
            self.deleted.add(person)
            for child in [c for c, (parent, _) in self.orders.items() if parent == person]:
                del self.orders[child]  # the cascade
                self.deleted.add(child)
        elif choice < 0.85 and self.children:
            person = rng.choice(sorted(self.people))
            body = {"item": f"item {n}", "qty": n % 5}
            created = self.call("POST", f"/rest/people/{person}/orders", body, 201)
            self.orders[created["_id"]] = (person, body)
        elif self.orders:
            child = rng.choice(sorted(self.orders))
            parent, fields = self.orders[child]
            self.call("PATCH", f"/rest/people/{parent}/orders/{child}", {"qty": -n})
            fields["qty"] = -n

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.step()
        except BaseException as exc:  # reported by the test's thread
            self.failure = exc


class Migration:
    """``docbase migrate --follow`` running as a process, its stderr in a file."""

    def __init__(self, cwd: Path, source: str, target: str) -> None:
        self.log = cwd / "migrate.log"
        with self.log.open("wb") as err, (cwd / "migrate.out").open("wb") as out:
            self.process = subprocess.Popen(
                [*docbase_command(), "migrate", "--storage", source, "--to", target,
                 "--follow"], cwd=cwd, env=child_env(), stdout=out, stderr=err)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, condition: Any, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not condition(self.text()):
            assert self.process.poll() is None, f"migrate exited:\n{self.text()}"
            assert time.monotonic() < deadline, f"timed out waiting for {what}:\n{self.text()}"
            time.sleep(0.05)

    def caught_up_after(self, moment: str) -> int | None:
        """The position of the first ``caught up`` line whose log was read after ``moment``."""
        for position, read_at in CAUGHT_UP.findall(self.text()):
            if read_at > moment:
                return int(position)
        return None


async def _collections(url: str) -> dict[str, Any]:
    """Every user collection's and the relation records' count and content checksum."""
    async with await docbase.connect(url) as db:
        names = [n for n in await db.store.collections() if not n.startswith("_")]
        digests = {name: await digest_collection(db.store, name)
                   for name in [*sorted(names), RELATIONS]}
        return {name: (d.count, d.hexdigest) for name, d in digests.items()}


async def _documents(url: str, name: str) -> dict[str, dict[str, Any]]:
    async with await docbase.connect(url) as db:
        return {document_id(line): msgspec.json.decode(line)
                async for lines in pages(db.store, name) for line in lines}


async def _cascade_on_target(url: str, parent: str) -> list[Any]:
    """Delete ``parent`` in the target; the children of it that are left."""
    async with await docbase.connect(url) as db:
        await db.collection("people").delete(parent)
        return await db.store.find("orders", Query(filter=Eq(("_parent_id",), parent),
                                                    limit=None))


def test_migrate_follow_keeps_every_acknowledged_write(tmp_path: Path,
                                                       schema_url: str) -> None:
    source = f"sqlite:///{tmp_path}/source.db"
    served = launch(tmp_path, "--storage", source)
    writer = Writer(served)
    thread = threading.Thread(target=writer.run)
    migration: Migration | None = None
    try:
        writer.seed()
        thread.start()
        migration = Migration(tmp_path, source, schema_url)
        migration.wait_for(lambda text: "following the source's writes" in text,
                           "the copy to end")
        writer.children = True  # the child field "orders" first appears while following
        following = writer.writes
        while writer.writes < following + 150 and thread.is_alive():
            time.sleep(0.05)
        writer.stop.set()
        thread.join()
        assert writer.failure is None, writer.failure
        stopped = utc_now()
        # the operator's wait: a "caught up" line from a look at the log after the last write
        migration.wait_for(lambda _: migration.caught_up_after(stopped) is not None,
                           "a caught-up line after the writes stopped", timeout=60)
        position = migration.caught_up_after(stopped)
        migration.process.send_signal(signal.SIGINT)
        assert migration.process.wait(60) == 0, migration.text()
    finally:
        writer.stop.set()
        if thread.is_alive():
            thread.join()
        if migration is not None and migration.process.poll() is None:
            migration.process.kill()
            migration.process.wait()
        served.stop()
    text = migration.text()
    assert f"stopped at position {position}" in text, text
    assert int(re.findall(r"(\d+) write\(s\) applied", text)[-1]) > 100  # writes followed

    wanted_people = asyncio.run(_documents(schema_url, "people"))
    wanted_orders = asyncio.run(_documents(schema_url, "orders"))
    for person, fields in writer.people.items():
        assert person in wanted_people, person
        assert {k: wanted_people[person][k] for k in fields} == fields
    for child, (parent, fields) in writer.orders.items():
        assert child in wanted_orders, child
        assert wanted_orders[child]["_parent_id"] == parent
        assert {k: wanted_orders[child][k] for k in fields} == fields
    assert not writer.deleted & (wanted_people.keys() | wanted_orders.keys())
    assert writer.orders  # the run wrote children
    assert writer.deleted  # and deleted

    expected = asyncio.run(_collections(source))
    assert asyncio.run(_collections(schema_url)) == expected
    assert expected[RELATIONS][0] == 1  # people -> orders, recorded while following
    parent = next(parent for parent, _ in writer.orders.values())
    assert asyncio.run(_cascade_on_target(schema_url, parent)) == []
