"""``db.media`` of the embedded Database on every adapter: uploads, metadata, derivatives,
names, queries, deletes, limits and hostile images. Expected values are written out."""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
from typing import Any

import pytest

from docbase.core.auth import Principal, Scope
from docbase.core.database import Database
from docbase.core.errors import (
    Forbidden,
    InvalidId,
    InvalidImage,
    InvalidQuery,
    NotFound,
    PayloadTooLarge,
    RangeNotSatisfiable,
    Rejected,
)
from docbase.core.hooks import HookPoint
from docbase.core.media import MEDIA_COLLECTION, Upload, images
from docbase.core.ports import BlobInfo, BlobStore
from docbase.core.settings import Limits
from tests import media_samples as samples

SAMPLES = [
    ("shelf.png", samples.png(300, 200), "image/png", (300, 200)),
    ("rotated.jpg", samples.jpeg_rotated(800, 400), "image/jpeg", (400, 800)),
    ("anim.gif", samples.gif(200, 100), "image/gif", (200, 100)),
    ("banner.webp", samples.webp(1000, 500), "image/webp", (1000, 500)),
    ("manual.pdf", samples.pdf(), "application/pdf", None),
    ("notes.txt", samples.TEXT, "text/plain", None),
]


class RecordingBlobs:
    """The real blob store, with every key ever put recorded (to look for leftovers)."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self.keys: list[str] = []

    async def put(self, key: str, chunks: Any, content_type: str) -> BlobInfo:
        self.keys.append(key)
        return await self.blobs.put(key, chunks, content_type)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.blobs, name)


async def leftovers(blobs: RecordingBlobs) -> list[str]:
    found = []
    for key in blobs.keys:
        try:
            await blobs.blobs.stat(key)
        except NotFound:
            continue
        found.append(key)
    return found


@pytest.fixture
async def db(stores: Any) -> Database:
    store, blobs = stores
    return Database(store, blobs)


async def upload_samples(db: Database) -> list[str]:
    uploaded = await db.media.upload([Upload(name, data) for name, data, _, _ in SAMPLES])
    assert re.fullmatch(r"[0-9a-f]{32}", uploaded.uploadid)
    return uploaded.ids


async def test_upload_stores_every_file_with_its_metadata_in_upload_order(db: Database) -> None:
    ids = await upload_samples(db)
    records = [await db.media.meta(i) for i in ids]
    assert [r["_id"] for r in records] == ids
    assert [r["origname"] for r in records] == [name for name, *_ in SAMPLES]
    assert [r["mimetype"] for r in records] == [mime for _, _, mime, _ in SAMPLES]
    assert [r["mediatype"] for r in records] == ["image"] * 4 + ["application", "text"]
    assert [r["filesize"] for r in records] == [len(data) for _, data, _, _ in SAMPLES]
    assert [r["sha256"] for r in records] == [hashlib.sha256(d).hexdigest()
                                              for _, d, _, _ in SAMPLES]
    assert [(r.get("width"), r.get("height")) if "width" in r else None for r in records] == [
        size for *_, size in SAMPLES]
    assert records[1]["exif"]["Orientation"] == 6
    assert records[1]["exif"]["Make"] == "Acme Cameras"
    assert "exif" not in records[5]
    assert {r["_createdby"] for r in records} == {"api"}
    assert len({r["uploadid"] for r in records}) == 1
    for media_id, (_, data, mime, _) in zip(ids, SAMPLES, strict=True):
        opened = await db.media.open(media_id)
        assert (await opened.read(), opened.content_type) == (data, mime)


async def test_derivatives_keep_aspect_never_upscale_and_apply_exif_orientation(
    db: Database, blob_store: BlobStore
) -> None:
    ids = await upload_samples(db)
    expected = {  # (t size, w size, content type)
        0: ((128, 85), (300, 200), "image/png"),
        1: ((128, 256), (400, 800), "image/jpeg"),
        2: ((128, 64), (200, 100), "image/png"),
        3: ((128, 64), (640, 320), "image/webp"),
    }
    for index, (t_size, w_size, mime) in expected.items():
        thumb, web = await db.media.open(ids[index], "t"), await db.media.open(ids[index], "w")
        t_data, w_data = await thumb.read(), await web.read()
        assert (samples.size_of(t_data), samples.size_of(w_data)) == (t_size, w_size)
        assert (thumb.content_type, web.content_type) == (mime, mime)
        assert (await blob_store.stat(f"{ids[index]}/t")).size == len(t_data)
    rotated = await (await db.media.open(ids[1], "t")).read()
    assert samples.colour_at(rotated, 0.5, 0.25) == "red"  # the stored left side is on top
    assert samples.colour_at(rotated, 0.5, 0.75) == "blue"
    for index in (4, 5):  # not images: s is ignored
        opened = await db.media.open(ids[index], "t")
        assert await opened.read() == SAMPLES[index][1]
    with pytest.raises(InvalidQuery):
        await db.media.open(ids[0], "x")


async def test_a_derivative_is_made_once_for_concurrent_first_requests(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    [media_id] = (await db.media.upload([Upload("big.png", samples.png(1600, 1200))])).ids
    calls: list[int] = []
    real = images.derive

    def counting(*args: Any) -> Any:  # a spy: the real Pillow work still runs
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(images, "derive", counting)
    opened = await asyncio.gather(*(db.media.open(media_id, "w") for _ in range(8)))
    bodies = await asyncio.gather(*(f.read() for f in opened))
    assert calls == [1]
    assert len(set(bodies)) == 1
    assert samples.size_of(bodies[0]) == (640, 480)
    assert len(db.media._deriving) == 0  # the per-key locks are forgotten
    await db.media.open(media_id, "w")
    assert calls == [1]  # served from the blob store afterwards


async def test_a_name_opens_the_newest_upload_of_that_name(db: Database) -> None:
    first = (await db.media.upload([Upload("price-list.txt", b"old prices\n")])).ids[0]
    second = (await db.media.upload([Upload("price-list.txt", b"new prices\n")])).ids[0]
    assert await (await db.media.open("price-list.txt")).read() == b"new prices\n"
    assert await (await db.media.open(first)).read() == b"old prices\n"
    await db.media.delete(second)
    assert await (await db.media.open("price-list.txt")).read() == b"old prices\n"
    with pytest.raises(NotFound):
        await db.media.open("no-such-file.txt")


async def test_metadata_queries_use_the_rest_query_language(db: Database) -> None:
    ids = await upload_samples(db)
    big = await db.media.find({"filesize": {"$gt": 1000}}, {"$orderby": {"filesize": -1}})
    by_size = sorted((d for d in SAMPLES if len(d[1]) > 1000), key=lambda d: -len(d[1]))
    assert [r["origname"] for r in big] == [d[0] for d in by_size]
    shaped = await db.media.find({"mediatype": "image"},
                                 {"$fields": {"origname": 1}, "$orderby": {"origname": 1},
                                  "$skip": 1, "$max": 2})
    assert shaped == [{"_id": ids[3], "origname": "banner.webp"},
                      {"_id": ids[1], "origname": "rotated.jpg"}]
    unknown = "5f0c0e0c0e0c0e0c0e0c0e0c"
    listed = await db.media.find_ids([ids[5], unknown, ids[0]])
    assert [r["_id"] for r in listed] == [ids[5], ids[0]]
    with pytest.raises(InvalidId):
        await db.media.find_ids(["nope"])
    with pytest.raises(InvalidQuery):
        await db.media.find({"filesize": {"$where": 1}})


async def test_delete_removes_bytes_derivatives_and_metadata(
    db: Database, blob_store: BlobStore
) -> None:
    ids = await upload_samples(db)
    await db.media.open(ids[0], "t")
    assert await db.media.delete(ids[0]) == [ids[0]]
    for key in (ids[0], f"{ids[0]}/t"):
        with pytest.raises(NotFound):
            await blob_store.stat(key)
    with pytest.raises(NotFound):
        await db.media.meta(ids[0])
    with pytest.raises(NotFound):
        await db.media.delete(ids[0])
    assert len(await db.media.find()) == len(SAMPLES) - 1


async def test_ranges_of_the_content(db: Database) -> None:
    [media_id] = (await db.media.upload([Upload("digits.txt", b"0123456789")])).ids
    opened = await db.media.open(media_id)
    assert b"".join([c async for c in opened.chunks(2, 5)]) == b"234"
    assert b"".join([c async for c in opened.chunks(7)]) == b"789"
    with pytest.raises(RangeNotSatisfiable):
        opened.chunks(10)


FAILED_UPLOADS = {  # the last file(s) of each upload fail it
    "too-big": ([Upload("huge.bin", b"\x00" * 100_001)], PayloadTooLarge, "'huge.bin'"),
    "too-many-bytes": ([Upload("a.bin", b"\x00" * 94_500)], PayloadTooLarge,
                       "max_upload_bytes"),
    "too-many-files": ([Upload("third.txt", b"3\n"), Upload("fourth.txt", b"4\n")],
                       PayloadTooLarge, "max_upload_files"),
    "corrupt": ([Upload("broken.png", samples.corrupt_png())], InvalidImage, "'broken.png'"),
    "bomb": ([Upload("bomb.png", samples.bomb_png())], InvalidImage, "'bomb.png'"),
}


async def test_a_failed_upload_leaves_neither_bytes_nor_metadata(stores: Any) -> None:
    store, real_blobs = stores
    for bad, (last, expected, named) in FAILED_UPLOADS.items():
        blobs = RecordingBlobs(real_blobs)
        db = Database(store, blobs, limits=Limits(  # type: ignore[arg-type]
            max_upload_file_bytes=100_000, max_upload_bytes=95_000, max_upload_files=3))
        files = [Upload("ok.txt", b"fine\n" * 100), Upload("ok.png", samples.png(50, 50)),
                 *last]
        with pytest.raises(expected) as raised:
            await db.media.upload(files)
        assert named in raised.value.message, bad
        assert len(blobs.keys) >= 2, bad
        assert await leftovers(blobs) == [], bad
        assert await store.find(MEDIA_COLLECTION, _all()) == [], bad


def _all() -> Any:
    from docbase.core.query import Query

    return Query()


@pytest.mark.parametrize(("name", "data"), [("cut.jpg", samples.truncated_jpeg()),
                                             ("cut.png", samples.truncated_png())])
async def test_a_truncated_image_is_refused_at_upload_and_leaves_nothing(
    stores: Any, name: str, data: bytes,
) -> None:
    from PIL import Image

    header = Image.open(io.BytesIO(data))
    assert header.size == (400, 300)  # its header alone reads fine
    store, real_blobs = stores
    blobs = RecordingBlobs(real_blobs)
    db = Database(store, blobs)  # type: ignore[arg-type]
    with pytest.raises(InvalidImage) as raised:
        await db.media.upload([Upload("fine.txt", b"fine\n"), Upload(name, data)])
    assert raised.value.message.startswith(f"image {name!r} cannot be read")
    assert len(blobs.keys) == 2
    assert await leftovers(blobs) == []
    assert await store.find(MEDIA_COLLECTION, _all()) == []


async def test_an_empty_upload_is_refused(db: Database) -> None:
    with pytest.raises(InvalidQuery):
        await db.media.upload([])


@pytest.mark.parametrize(("raw", "stored"), [
    ("../../etc/passwd", "passwd"),
    ("C:\\Users\\ann\\..\\photo.png", "photo.png"),
    ("evil\x00name.txt", "evilname.txt"),
    ("..", "file"),
    ("", "file"),
    ("Grüße.txt", "Grüße.txt"),
])
async def test_file_names_lose_path_components_and_control_characters(
    raw: str, stored: str
) -> None:
    from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

    async with Database(MemoryDocumentStore(), MemoryBlobStore()) as db:
        [media_id] = (await db.media.upload([Upload(raw, b"content\n")])).ids
        assert (await db.media.meta(media_id))["origname"] == stored


async def test_the_key_rules_of_media_hold_in_the_library() -> None:
    from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

    rest_only = Principal(kind="key", full_access=False, scope=Scope(paths=("/rest/**",)))
    media_key = Principal(kind="key", full_access=False, scope=Scope(paths=("/media/**",)))
    async with Database(MemoryDocumentStore(), MemoryBlobStore()) as db:
        with pytest.raises(Forbidden):
            await db.media.upload([Upload("a.txt", b"a\n")], principal=rest_only)
        [media_id] = (await db.media.upload([Upload("a.txt", b"a\n")],
                                            principal=media_key)).ids
        for call in (db.media.meta(media_id, principal=rest_only),
                     db.media.find(principal=rest_only),
                     db.media.delete(media_id, principal=rest_only)):
            with pytest.raises(Forbidden):
                await call
        assert (await db.media.meta(media_id, principal=media_key))["origname"] == "a.txt"
        assert await (await db.media.open(media_id)).read() == b"a\n"  # no key needed
        assert await db.media.delete(media_id, principal=media_key) == [media_id]


async def test_documents_keep_media_ids_unresolved() -> None:
    from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

    async with Database(MemoryDocumentStore(), MemoryBlobStore()) as db:
        ids = (await db.media.upload([Upload("a.png", samples.png(10, 10))])).ids
        product = await db.collection("products").insert({"name": "Lamp", "photos": ids})
        read = await db.collection("products").get(product["_id"], metafields=False)
        assert read == {"_id": product["_id"], "name": "Lamp", "photos": ids}


async def test_a_hook_refusing_the_metadata_leaves_no_bytes_and_a_late_failure_keeps_them(
    stores: Any,
) -> None:
    store, real_blobs = stores
    blobs = RecordingBlobs(real_blobs)
    db = Database(store, blobs)  # type: ignore[arg-type]

    async def refuse(write: Any) -> None:
        raise Rejected("no uploads today")

    db.hooks.on(HookPoint.BEFORE_INSERT, refuse, collection=MEDIA_COLLECTION)
    with pytest.raises(Rejected):
        await db.media.upload([Upload("a.txt", b"a\n"), Upload("b.png", samples.png(20, 20))])
    assert len(blobs.keys) == 2
    assert await leftovers(blobs) == []

    async def fail_late(write: Any) -> None:
        raise RuntimeError("after the commit")

    db = Database(store, blobs)  # type: ignore[arg-type]
    db.hooks.on(HookPoint.AFTER_INSERT, fail_late, collection=MEDIA_COLLECTION)
    with pytest.raises(RuntimeError):
        await db.media.upload([Upload("c.txt", b"c\n")])
    [record] = await store.find(MEDIA_COLLECTION, _all())
    assert record["origname"] == "c.txt"
    assert await (await db.media.open(record["_id"])).read() == b"c\n"  # bytes kept


async def test_image_work_over_its_time_limit_is_refused() -> None:
    from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

    async with Database(MemoryDocumentStore(), MemoryBlobStore(),
                        limits=Limits(image_timeout=1e-6)) as db:
        with pytest.raises(InvalidImage, match=r"'slow\.png'.*limits\.image_timeout"):
            await db.media.upload([Upload("slow.png", samples.png(2000, 2000))])
        assert await db.media.find() == []


@pytest.mark.parametrize(("head", "expected"), [
    (b"0123456789", "text/plain"),  # puremagic knows a test file of these digits
    (b"ID3 is also how MP3 files start\n", "text/plain"),
    ("Grüße\n".encode(), "text/plain"),
    (b'{"a": 1}', "application/json"),
    (samples.HTML, "text/html"),
    (samples.SVG, "image/svg+xml"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"/>', "image/svg+xml"),
    (b"%PDF-1.4\n1 0 obj\n", "application/pdf"),
    (samples.png(4, 4), "image/png"),
    (samples.gif(4, 4), "image/gif"),
    (bytes(range(256)), "application/octet-stream"),
    (b"", "application/octet-stream"),
])
def test_sniffing_reads_the_content_not_the_name(head: bytes, expected: str) -> None:
    from docbase.core.media import sniff

    assert sniff(head) == expected


def test_a_chunk_buffer_hands_out_whole_chunks_a_batch_at_a_time() -> None:
    from docbase.core.chunks import ChunkBuffer

    buffer = ChunkBuffer(4, 2)
    assert buffer.add(b"abc") == []
    assert buffer.add(b"defgh") == [b"abcd", b"efgh"]
    assert buffer.add(b"ijklmnopqr") == [b"ijkl", b"mnop"]
    assert buffer.rest() == [b"qr"]
    assert buffer.rest() == []
    assert buffer.size == 18
    with pytest.raises(ValueError, match="at least one"):
        ChunkBuffer(0, 1)
