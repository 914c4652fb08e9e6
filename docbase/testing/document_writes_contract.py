"""The write half of the :class:`~docbase.core.ports.DocumentStore` contract.

:class:`DocumentWritesContract` covers update, delete, delete_all, delete_where,
collections, indexes and the change signal; it is part of
:class:`docbase.testing.contract.DocumentStoreContract`, which adapters subclass.
"""

from __future__ import annotations

import asyncio

import pytest

from docbase.core.errors import Conflict, NotFound, VersionMismatch
from docbase.core.ports import Deletion, DocumentStore
from docbase.core.query import MATCH_ALL, And, Eq, Gt, In, Query
from docbase.core.update import IncOp, PushOp, SetOp, UnsetOp, Update, parse_update
from docbase.testing.document_reads_contract import C, doc, ids_of, seed


class DocumentWritesContract:
    """Tests update, delete, collections, indexes and the change signal of a ``store``."""

    # ---------------------------------------------------------------- update

    async def test_update_applies_ops_stamp_and_version(self, store: DocumentStore) -> None:
        (original,) = await seed(store, {"n": 1, "tags": ["a"], "gone": 1})
        update = Update((IncOp(("n",), 2), PushOp(("tags",), "b"), UnsetOp(("gone",)),
                         SetOp(("deep", "x"), True)))
        stamp = {"_changed": "2030-01-01T00:00:00.000Z", "_changedby": "me@example.com"}
        changed = await store.update(C, original["_id"], update, stamp=stamp)
        expected = {**original, "n": 3, "tags": ["a", "b"], "deep": {"x": True}, **stamp,
                    "_version": 1}
        del expected["gone"]
        assert changed == expected
        assert await store.get(C, original["_id"]) == expected

    async def test_update_unknown_id_raises_not_found(self, store: DocumentStore) -> None:
        with pytest.raises(NotFound):
            await store.update(C, "0" * 24, parse_update({"a": 1}), stamp={})

    async def test_update_with_stale_version_changes_nothing(
        self, store: DocumentStore
    ) -> None:
        (original,) = await seed(store, {"n": 1})
        await store.update(C, original["_id"], parse_update({"n": 2}), stamp={},
                           expected_version=0)
        with pytest.raises(VersionMismatch):
            await store.update(C, original["_id"], parse_update({"n": 3}), stamp={},
                               expected_version=0)
        assert (await store.get(C, original["_id"]))["n"] == 2

    async def test_update_inc_on_string_conflicts_and_changes_nothing(
        self, store: DocumentStore
    ) -> None:
        (original,) = await seed(store, {"n": "one", "m": 1})
        with pytest.raises(Conflict):
            await store.update(C, original["_id"], parse_update({"m": 5, "$inc": {"n": 1}}),
                               stamp={})
        assert await store.get(C, original["_id"]) == original

    async def test_concurrent_increments_lose_nothing(self, store: DocumentStore) -> None:
        (original,) = await seed(store, {"n": 0})
        update = parse_update({"$inc": {"n": 1}})
        await asyncio.gather(*(store.update(C, original["_id"], update, stamp={})
                               for _ in range(50)))
        final = await store.get(C, original["_id"])
        assert final["n"] == 50
        assert final["_version"] == 50

    # ---------------------------------------------------------------- delete

    async def test_delete_returns_ids_actually_deleted(self, store: DocumentStore) -> None:
        docs = await seed(store, {"i": 1}, {"i": 2}, {"i": 3})
        deleted = await store.delete(C, [docs[0]["_id"], "0" * 24, docs[2]["_id"]])
        assert sorted(deleted) == sorted([docs[0]["_id"], docs[2]["_id"]])
        assert ids_of(await store.find(C, Query())) == [docs[1]["_id"]]

    async def test_delete_at_expected_version_deletes(self, store: DocumentStore) -> None:
        (original,) = await seed(store, {"n": 1})
        await store.update(C, original["_id"], parse_update({"n": 2}), stamp={})
        assert await store.delete(C, [original["_id"]], expected_version=1) == [original["_id"]]
        assert await store.count(C, MATCH_ALL) == 0

    async def test_delete_at_stale_version_raises_and_keeps_document(
        self, store: DocumentStore
    ) -> None:
        (original,) = await seed(store, {"n": 1})
        changed = await store.update(C, original["_id"], parse_update({"n": 2}), stamp={})
        with pytest.raises(VersionMismatch):
            await store.delete(C, [original["_id"]], expected_version=0)
        assert await store.get(C, original["_id"]) == changed

    async def test_delete_of_unknown_id_at_a_version_deletes_nothing(
        self, store: DocumentStore
    ) -> None:
        await seed(store, {"n": 1})
        assert await store.delete(C, ["0" * 24], expected_version=0) == []
        assert await store.delete("never_written", ["0" * 24], expected_version=0) == []
        assert await store.count(C, MATCH_ALL) == 1

    async def test_delete_at_a_version_takes_one_id(self, store: DocumentStore) -> None:
        docs = await seed(store, {"i": 1}, {"i": 2})
        with pytest.raises(ValueError, match="one id"):
            await store.delete(C, ids_of(docs), expected_version=0)
        assert await store.count(C, MATCH_ALL) == 2

    async def test_concurrent_updates_and_versioned_deletes_agree(
        self, store: DocumentStore
    ) -> None:
        # each round: an update and a delete both expecting version 0 race; exactly
        # one wins, and a deleted document was never updated (and vice versa)
        docs = await seed(store, *({"i": i} for i in range(20)))
        update = parse_update({"$inc": {"i": 100}})

        async def update_at_zero(document_id: str) -> bool:
            try:
                await store.update(C, document_id, update, stamp={}, expected_version=0)
            except (VersionMismatch, NotFound):
                return False
            return True

        async def delete_at_zero(document_id: str) -> bool:
            try:
                return await store.delete(C, [document_id], expected_version=0) == [document_id]
            except VersionMismatch:
                return False

        outcomes = await asyncio.gather(*(asyncio.gather(update_at_zero(d["_id"]),
                                                         delete_at_zero(d["_id"]))
                                          for d in docs))
        assert all(updated != deleted for updated, deleted in outcomes)
        remaining = {d["_id"]: d for d in await store.find(C, Query(limit=None))}
        for document, (updated, _deleted) in zip(docs, outcomes, strict=True):
            if updated:
                assert remaining[document["_id"]]["i"] == document["i"] + 100
            else:
                assert document["_id"] not in remaining

    async def test_delete_all_deletes_each_group_and_reports_it(
        self, store: DocumentStore
    ) -> None:
        docs = await seed(store, {"i": 1}, {"i": 2})
        (other,) = await store.find(C, Query(filter=Eq(("i",), 2)))
        child = doc(of=docs[0]["_id"])
        await store.insert("children", [child])
        deleted = await store.delete_all([
            Deletion("children", (child["_id"], "0" * 24)),
            Deletion(C, (docs[0]["_id"],), expected_version=0),
            Deletion("never_written", ("0" * 24,)),
        ])
        assert deleted == [[child["_id"]], [docs[0]["_id"]], []]
        assert await store.count("children", MATCH_ALL) == 0
        assert ids_of(await store.find(C, Query())) == [other["_id"]]

    async def test_delete_all_failing_at_a_later_group_leaves_no_orphan(
        self, store: DocumentStore
    ) -> None:
        (parent,) = await seed(store, {"name": "parent"})
        await store.update(C, parent["_id"], parse_update({"name": "changed"}), stamp={})
        children = [doc(of=parent["_id"], i=i) for i in range(3)]
        await store.insert("children", children)
        with pytest.raises(VersionMismatch):
            await store.delete_all([Deletion("children", tuple(ids_of(children))),
                                    Deletion(C, (parent["_id"],), expected_version=0)])
        assert (await store.get(C, parent["_id"]))["name"] == "changed"
        # in one transaction nothing is deleted; group by group, the children went first
        remaining = await store.count("children", MATCH_ALL)
        assert remaining == (len(children) if store.transactional else 0)

    async def test_delete_where_removes_matches_only(self, store: DocumentStore) -> None:
        docs = await seed(store, {"k": 1}, {"k": 2}, {"k": 1}, {})
        deleted = await store.delete_where(C, In(("k",), (1, None)))
        assert sorted(deleted) == sorted(ids_of([docs[0], docs[2], docs[3]]))
        assert ids_of(await store.find(C, Query())) == [docs[1]["_id"]]

    # ---------------------------------------------------------------- collections

    async def test_collections_lists_written_ones_and_drop_removes(
        self, store: DocumentStore
    ) -> None:
        await store.insert("beta", [doc(a=1)])
        await store.insert("alpha", [doc(a=1)])
        names = await store.collections()
        assert [n for n in names if n in ("alpha", "beta")] == ["alpha", "beta"]
        await store.drop("alpha")
        assert "alpha" not in await store.collections()
        assert await store.find("alpha", Query()) == []
        await store.drop("never_written")

    async def test_collections_are_isolated(self, store: DocumentStore) -> None:
        first = doc(a=1)
        await store.insert("one", [first])
        with pytest.raises(NotFound):
            await store.get("two", first["_id"])
        assert await store.count("two", MATCH_ALL) == 0

    # ---------------------------------------------------------------- indexes

    async def test_unique_index_refuses_duplicates(self, store: DocumentStore) -> None:
        await store.ensure_index(C, ("email",), unique=True)
        await store.ensure_index(C, ("email",), unique=True)
        await seed(store, {"email": "a@x"}, {"other": 1}, {"other": 2})
        with pytest.raises(Conflict):
            await store.insert(C, [doc(email="b@x"), doc(email="a@x")])
        assert await store.count(C, MATCH_ALL) == 3
        (second,) = await seed(store, {"email": "c@x"})
        with pytest.raises(Conflict):
            await store.update(C, second["_id"], parse_update({"email": "a@x"}), stamp={})
        assert (await store.get(C, second["_id"]))["email"] == "c@x"

    async def test_unique_index_on_repeated_values_conflicts(
        self, store: DocumentStore
    ) -> None:
        await seed(store, {"code": 1}, {"code": 1})
        with pytest.raises(Conflict):
            await store.ensure_index(C, ("code",), unique=True)

    async def test_plain_index_keeps_results_equal(self, store: DocumentStore) -> None:
        docs = await seed(store, {"k": 2}, {"k": 1}, {"k": [1, 3]}, {"k": "1"})
        await store.ensure_index(C, ("k",))
        assert ids_of(await store.find(C, Query(filter=Eq(("k",), 1)))) == ids_of(
            [docs[1], docs[2]])
        assert await store.count(C, And((Gt(("k",), 1),))) == 2

    # ---------------------------------------------------------------- change signal

    async def test_change_signal_is_absent_or_wakes_a_waiter(self, store: DocumentStore) -> None:
        signal = store.change_signal()
        assert store.change_signal() is signal
        if signal is None:  # the engine has no push: change-log readers poll
            return
        seen, settled = -1, False
        for _ in range(50):  # until a wait runs out quietly (a listener is set up by then)
            now = await signal.wait(seen, 0.2)
            settled, seen = now == seen, now
            if settled:
                break
        assert settled
        waiter = asyncio.create_task(signal.wait(seen, 30))
        await asyncio.sleep(0.2)
        assert not waiter.done()
        await signal.notify()
        assert await asyncio.wait_for(waiter, 10) != seen
