"""List statements are built once per query shape; equal-looking operands stay apart."""

from __future__ import annotations

from pathlib import Path

from docbase.adapters.sql import from_url
from docbase.core.query import Eq, Query


async def test_true_one_and_one_point_oh_are_different_queries(tmp_path: Path) -> None:
    store, _ = from_url(f"sqlite:///{tmp_path}/cache.db")
    async with store:
        await store.insert("c", [{"_id": f"{n:024x}", "_version": 0, "a": value}
                                 for n, value in enumerate([True, 1, 2.5, "1"])])

        async def matching(value: object) -> list[object]:
            found = await store.find("c", Query(filter=Eq(("a",), value)))  # type: ignore[arg-type]
            return [d["a"] for d in found]

        for _ in range(2):  # the second round is answered by cached statements
            assert await matching(1) == [1]
            assert await matching(True) == [True]
            assert await matching(1.0) == [1]
            assert await matching(2.5) == [2.5]
            assert await matching("1") == ["1"]
        assert len(store._find_statements) == 5
