"""The contract every :class:`DocumentStore`, :class:`BlobStore` and :class:`Mailer` must keep.

Subclass :class:`DocumentStoreContract` / :class:`BlobStoreContract` in a test module
and provide an async ``store`` / ``blob_store`` fixture yielding an open, empty store
(:class:`MailerContract`: ``mailer`` and ``delivered``). The document store's tests are
written in two halves, :mod:`docbase.testing.document_reads_contract` and
:mod:`docbase.testing.document_writes_contract`. Expected results are written out by
hand from the semantics in ``docs/query.md``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from docbase.core.errors import MailDeliveryError, NotFound
from docbase.core.ports import BlobStore, Mailer, MailMessage
from docbase.testing.document_reads_contract import DocumentReadsContract
from docbase.testing.document_writes_contract import DocumentWritesContract
from docbase.testing.key_contract import DocumentKeysContract


class DocumentStoreContract(DocumentReadsContract, DocumentWritesContract,
                            DocumentKeysContract):
    """Tests every method of :class:`~docbase.core.ports.DocumentStore`."""


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
