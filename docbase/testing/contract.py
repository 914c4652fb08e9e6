"""The contract every :class:`DocumentStore` and :class:`BlobStore` must keep.

Subclass :class:`DocumentStoreContract` / :class:`BlobStoreContract` in a test module
and provide an async ``store`` / ``blob_store`` fixture yielding an open, empty store.
Expected results here are written out by hand from the semantics in ``docs/query.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from docbase.core.documents import Document, new_document
from docbase.core.errors import Conflict, MailDeliveryError, NotFound, VersionMismatch
from docbase.core.ports import BlobStore, Deletion, DocumentStore, Mailer, MailMessage
from docbase.core.query import (
    MATCH_ALL,
    Aggregate,
    And,
    Eq,
    Gt,
    In,
    Projection,
    Query,
    SortKey,
    Text,
)
from docbase.core.update import IncOp, PushOp, SetOp, UnsetOp, Update, parse_update

C = "things"


def doc(**fields: Any) -> Document:
    """A stamped new document with ``fields``."""
    return new_document(fields, "api")


def ids_of(documents: list[Document]) -> list[str]:
    """The ``_id`` of each document, in order."""
    return [d["_id"] for d in documents]


async def seed(store: DocumentStore, *bodies: dict[str, Any]) -> list[Document]:
    """Insert one stamped document per body into the test collection."""
    documents = [doc(**body) for body in bodies]
    await store.insert(C, documents)
    return documents


class DocumentStoreContract:
    """Tests every method of :class:`~docbase.core.ports.DocumentStore`."""

    # ---------------------------------------------------------------- insert / get

    async def test_insert_then_get_returns_equal_document(self, store: DocumentStore) -> None:
        original = doc(name="Joe", age=17, tags=["a", "b"], address={"city": "Oslo"},
                       ratio=0.5, flag=True, nothing=None, text="æøå ☃")
        await store.insert(C, [original])
        assert await store.get(C, original["_id"]) == original

    async def test_get_unknown_id_raises_not_found(self, store: DocumentStore) -> None:
        with pytest.raises(NotFound):
            await store.get(C, "0" * 24)

    async def test_get_in_unknown_collection_raises_not_found(
        self, store: DocumentStore
    ) -> None:
        with pytest.raises(NotFound):
            await store.get("never_written", "0" * 24)

    async def test_insert_duplicate_id_conflicts_and_inserts_nothing(
        self, store: DocumentStore
    ) -> None:
        first = doc(n=1)
        await store.insert(C, [first])
        fresh = doc(n=2)
        with pytest.raises(Conflict):
            await store.insert(C, [fresh, {**doc(n=3), "_id": first["_id"]}])
        assert await store.count(C, MATCH_ALL) == 1
        with pytest.raises(NotFound):
            await store.get(C, fresh["_id"])

    async def test_returned_documents_cannot_change_stored_state(
        self, store: DocumentStore
    ) -> None:
        original = doc(tags=["a"], inner={"x": 1})
        await store.insert(C, [original])
        original["tags"].append("changed-after-insert")
        got = await store.get(C, original["_id"])
        got["inner"]["x"] = 99
        found = await store.find(C, Query())
        found[0]["tags"].append("changed-after-find")
        again = await store.get(C, original["_id"])
        assert again["tags"] == ["a"]
        assert again["inner"] == {"x": 1}

    # ---------------------------------------------------------------- find / count

    async def test_find_filters_sorts_and_pages(self, store: DocumentStore) -> None:
        docs = await seed(store, {"n": 3}, {"n": 1}, {"n": 2}, {"n": 5}, {"m": 1})
        query = Query(filter=Gt(("n",), 1), sort=(SortKey(("n",), -1),), skip=1, limit=2)
        assert [d["n"] for d in await store.find(C, query)] == [3, 2]
        assert len(await store.find(C, Query())) == len(docs)

    async def test_find_default_order_is_id_ascending(self, store: DocumentStore) -> None:
        docs = await seed(store, {"n": 1}, {"n": 2}, {"n": 3})
        assert ids_of(await store.find(C, Query())) == sorted(ids_of(docs))

    async def test_find_ties_broken_by_id(self, store: DocumentStore) -> None:
        docs = await seed(store, {"g": 1, "i": 0}, {"g": 0}, {"g": 1, "i": 1}, {"g": 0})
        found = await store.find(C, Query(sort=(SortKey(("g",), -1),)))
        expected = sorted(ids_of(docs[0::2])) + sorted(ids_of(docs[1::2]))
        assert ids_of(found) == expected

    async def test_find_sorts_across_types(self, store: DocumentStore) -> None:
        await seed(store, {"v": True}, {"v": "b"}, {"v": [3]}, {"v": 2}, {"v": None},
                   {"v": {"k": 1}}, {"w": 0}, {"v": "a"}, {"v": 1.5})
        found = await store.find(C, Query(sort=(SortKey(("v",)),)))
        # missing and null tie (broken by _id), then numbers, strings, objects, bools;
        # an array sorts by its smallest element ascending, so [3] sorts as the number 3
        values = [d.get("v", "<missing>") for d in found]
        assert values == [None, "<missing>", 1.5, 2, [3], "a", "b", {"k": 1}, True]

    async def test_find_limit_none_returns_everything(self, store: DocumentStore) -> None:
        await seed(store, *({"i": i} for i in range(30)))
        assert len(await store.find(C, Query(limit=None))) == 30
        assert len(await store.find(C, Query(limit=0))) == 0

    async def test_find_projection_includes_and_excludes(self, store: DocumentStore) -> None:
        (original,) = await seed(store, {"a": 1, "b": {"c": 2, "d": 3}, "e": 4})
        kept = await store.find(C, Query(projection=Projection((("a",), ("b", "c")), True)))
        assert kept == [{"_id": original["_id"], "a": 1, "b": {"c": 2}}]
        dropped = await store.find(C, Query(projection=Projection((("b",), ("e",)), False)))
        assert "b" not in dropped[0]
        assert "e" not in dropped[0]
        assert (dropped[0]["a"], dropped[0]["_version"]) == (1, 0)

    async def test_find_text_filter_is_case_insensitive(self, store: DocumentStore) -> None:
        docs = await seed(store, {"name": "Joe Smith"}, {"nested": {"deep": ["xJOEx"]}},
                          {"name": "Jane"})
        found = await store.find(C, Query(filter=Text("joe")))
        assert ids_of(found) == ids_of(docs[:2])

    async def test_find_in_unknown_collection_is_empty(self, store: DocumentStore) -> None:
        assert await store.find("never_written", Query()) == []
        assert await store.count("never_written", MATCH_ALL) == 0

    async def test_count_counts_matches_ignoring_paging(self, store: DocumentStore) -> None:
        await seed(store, {"k": "x"}, {"k": "y"}, {"k": "x"}, {})
        assert await store.count(C, Eq(("k",), "x")) == 2
        assert await store.count(C, Eq(("k",), None)) == 1
        assert await store.count(C, MATCH_ALL) == 4

    # ---------------------------------------------------------------- aggregate

    async def test_aggregate_without_groupby_gives_one_row(self, store: DocumentStore) -> None:
        await seed(store, {"s": 10}, {"s": 5}, {"s": "x"}, {"s": True}, {})
        rows = await store.aggregate(C, MATCH_ALL, (), (
            Aggregate("SUM", "s"), Aggregate("AVG", "s"), Aggregate("MIN", "s"),
            Aggregate("MAX", "s"), Aggregate("COUNT", "n")))
        assert len(rows) == 1
        assert rows[0].key == ()
        assert rows[0].values == {"SUM s": 15, "AVG s": 7.5, "MIN s": 5, "MAX s": True,
                                  "COUNT n": 5}

    async def test_float_sums_do_not_depend_on_document_order(
        self, store: DocumentStore
    ) -> None:
        # added one by one in _id order, group a gives 1.0 and group b 3.0 (1e16 + 1.0
        # rounds back to 1e16); the exact sums are 2.0 and 5.0, exact as doubles too
        await seed(store, {"g": "a", "v": 1e16}, {"g": "a", "v": 1.0},
                   {"g": "a", "v": -1e16}, {"g": "a", "v": 1.0})
        await seed(store, {"g": "b", "v": 1.0}, {"g": "b", "v": 1e16},
                   {"g": "b", "v": 1.0}, {"g": "b", "v": -1e16}, {"g": "b", "v": 3})
        rows = await store.aggregate(C, MATCH_ALL, (("g",),),
                                     (Aggregate("SUM", "v"), Aggregate("AVG", "v")))
        assert [(r.key, r.values) for r in rows] == [
            (("a",), {"SUM v": 2.0, "AVG v": 0.5}),
            (("b",), {"SUM v": 5.0, "AVG v": 1.0}),
        ]

    async def test_aggregate_on_nothing_gives_one_row(self, store: DocumentStore) -> None:
        rows = await store.aggregate(C, MATCH_ALL, (), (Aggregate("SUM", "s"),
                                                         Aggregate("AVG", "s"),
                                                         Aggregate("COUNT", "")))
        assert [(r.key, r.values) for r in rows] == [((), {"SUM s": 0, "AVG s": None,
                                                           "COUNT ": 0})]

    async def test_aggregate_groups_in_sort_order(self, store: DocumentStore) -> None:
        await seed(store, {"g": "b", "v": 1}, {"g": "a", "v": 2}, {"g": "b", "v": 3},
                   {"v": 4}, {"g": None, "v": 5}, {"g": 2, "v": 6})
        rows = await store.aggregate(C, Gt(("v",), 0), (("g",),),
                                     (Aggregate("SUM", "v"), Aggregate("COUNT", "n")))
        assert [(r.key, r.values) for r in rows] == [
            ((None,), {"SUM v": 9, "COUNT n": 2}),
            ((2,), {"SUM v": 6, "COUNT n": 1}),
            (("a",), {"SUM v": 2, "COUNT n": 1}),
            (("b",), {"SUM v": 4, "COUNT n": 2}),
        ]

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


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


class BlobStoreContract:
    """Tests every method of :class:`~docbase.core.ports.BlobStore`."""

    async def test_put_then_read_streams_same_bytes(self, blob_store: BlobStore) -> None:
        payload = bytes(range(256)) * 1000
        info = await blob_store.put("k1", _chunks(payload[:1000], payload[1000:]),
                                    "application/octet-stream")
        assert (info.key, info.size) == ("k1", len(payload))
        assert b"".join([c async for c in blob_store.read("k1")]) == payload

    async def test_read_range(self, blob_store: BlobStore) -> None:
        await blob_store.put("k2", _chunks(b"0123456789"), "text/plain")
        assert b"".join([c async for c in blob_store.read("k2", 2, 5)]) == b"234"
        assert b"".join([c async for c in blob_store.read("k2", 7)]) == b"789"

    async def test_stat_describes_blob(self, blob_store: BlobStore) -> None:
        await blob_store.put("k3", _chunks(b"abc"), "image/png")
        info = await blob_store.stat("k3")
        assert (info.key, info.size, info.content_type) == ("k3", 3, "image/png")

    async def test_put_replaces_existing(self, blob_store: BlobStore) -> None:
        await blob_store.put("k4", _chunks(b"old content"), "text/plain")
        await blob_store.put("k4", _chunks(b"new"), "text/csv")
        assert b"".join([c async for c in blob_store.read("k4")]) == b"new"
        assert (await blob_store.stat("k4")).content_type == "text/csv"

    async def test_unknown_blob_raises_not_found(self, blob_store: BlobStore) -> None:
        with pytest.raises(NotFound):
            await blob_store.stat("missing")
        chunks = blob_store.read("missing")
        with pytest.raises(NotFound):
            await anext(chunks)

    async def test_delete_reports_existence(self, blob_store: BlobStore) -> None:
        await blob_store.put("k5", _chunks(b"x"), "text/plain")
        assert await blob_store.delete("k5") is True
        assert await blob_store.delete("k5") is False
        with pytest.raises(NotFound):
            await blob_store.stat("k5")

    async def test_large_blob_round_trips(self, blob_store: BlobStore) -> None:
        chunk = b"\x00\xffdocbase" * 65536
        await blob_store.put("big", _chunks(*(chunk for _ in range(8))), "application/x")
        total = 0
        async for part in blob_store.read("big"):
            total += len(part)
        assert total == len(chunk) * 8

    async def test_keys_lists_the_blobs_begun_before_a_time(self, blob_store: BlobStore,
                                                            ) -> None:
        await blob_store.put("old/1", _chunks(b"a"), "text/plain")
        await blob_store.put("old/2", _chunks(b""), "text/plain")
        later = datetime.now(UTC) + timedelta(seconds=2)
        assert sorted([k async for k in blob_store.keys(later)]) == ["old/1", "old/2"]
        earlier = datetime.now(UTC) - timedelta(hours=1)
        assert [k async for k in blob_store.keys(earlier)] == []
        await blob_store.delete("old/1")
        assert [k async for k in blob_store.keys(later)] == ["old/2"]

    async def test_delete_unfinished_leaves_complete_blobs(self, blob_store: BlobStore,
                                                           ) -> None:
        await blob_store.put("done", _chunks(b"x" * 300_000), "text/plain")
        assert await blob_store.delete_unfinished(datetime.now(UTC) + timedelta(seconds=2)) == 0
        assert len(b"".join([c async for c in blob_store.read("done")])) == 300_000


class MailerContract:
    """Tests :meth:`~docbase.core.ports.Mailer.send`.

    Needs a ``mailer`` fixture and a ``delivered`` fixture returning the messages the
    transport's far end received.
    """

    async def test_send_returns_distinct_ids_and_delivers(
        self, mailer: Mailer, delivered: Any
    ) -> None:
        first = MailMessage(to=("ann@example.com",), subject="Hi", html="<b>hello</b>",
                            sender="docbase@example.com", sendername="Docbase")
        second = MailMessage(to=("bob@example.com", "cy@example.com"), subject="Two",
                             html="<p>x</p>", sender="docbase@example.com", text="x")
        ids = [await mailer.send(first), await mailer.send(second)]
        assert len(set(ids)) == 2
        assert all(isinstance(i, str) and i for i in ids)
        received = await delivered()
        assert [(m["to"], m["subject"]) for m in received] == [
            (["ann@example.com"], "Hi"), (["bob@example.com", "cy@example.com"], "Two")]

    async def test_send_to_invalid_address_raises(self, mailer: Mailer) -> None:
        with pytest.raises(MailDeliveryError):
            await mailer.send(MailMessage(to=("not an address",), subject="x", html="x",
                                          sender="docbase@example.com"))
