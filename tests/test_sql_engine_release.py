"""A closed SQL store lets its engine go (an embedder opens and closes databases at will).

The backend registry is keyed weakly by the engine, yet its value held the engine, so
every engine a process opened stayed alive with its statement cache: the differential
tests grew a worker by 30-80 MB per closed store.
"""

from __future__ import annotations

import gc
import weakref

from docbase.adapters.sql import from_url
from docbase.core.query import Eq, Query
from tests.backends import numbered


async def test_a_closed_store_releases_its_engine() -> None:
    store, _blobs = from_url("sqlite://")
    async with store:
        await store.insert("c", [numbered(n, a=n) for n in range(3)])
        assert len(await store.find("c", Query(filter=Eq(("a",), 2)))) == 1
        engine = weakref.ref(store.engine)
    del store, _blobs
    gc.collect()
    assert engine() is None, gc.get_referrers(engine())
