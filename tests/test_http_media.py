"""``/media`` over real HTTPS on every adapter: uploads, content and derivatives without a
key, download and caching headers, ranges, metadata queries, deletes, the key rules,
limits and hostile input. Expected values are written out."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docbase.core.database import Database
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from tests import media_samples as samples

LIMITS = Limits(max_upload_file_bytes=300_000, max_upload_bytes=700_000, max_upload_files=10)
UNKNOWN = "5f0c0e0c0e0c0e0c0e0c0e0c"
PNG, JPEG, GIF, WEBP, PDF = (samples.png(300, 200), samples.jpeg_rotated(800, 400),
                             samples.gif(200, 100), samples.webp(1000, 500), samples.pdf())
FILES = [  # field, name, bytes, the type the client claims (never believed)
    ("photo", "shelf.png", PNG, "text/html"),
    ("photo", "rotated.jpg", JPEG, "image/jpeg"),
    ("extra", "anim.gif", GIF, "application/octet-stream"),
    ("x", "banner.webp", WEBP, "image/webp"),
    ("manual", "manual.pdf", PDF, "application/pdf"),
    ("notes", "notes.txt", samples.TEXT, "image/png"),
]
TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf",
         "text/plain; charset=utf-8"]


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    store, blobs = stores
    async with live_docbase({"main": Database(store, blobs, name="main", limits=LIMITS)},
                            tmp_path) as running:
        yield running


def multipart(*parts: tuple[str, str, bytes, str]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [(field, (name, data, claimed)) for field, name, data, claimed in parts]


def raw_multipart(*parts: tuple[bytes, bytes]) -> tuple[bytes, dict[str, str]]:
    """A body written byte for byte: ``(Content-Disposition value, content)`` per part."""
    boundary = b"docbase-test-boundary"
    body = b"".join(b"--" + boundary + b"\r\nContent-Disposition: " + disposition +
                    b"\r\n\r\n" + content + b"\r\n" for disposition, content in parts)
    body += b"--" + boundary + b"--\r\n"
    return body, {"content-type": f"multipart/form-data; boundary={boundary.decode()}"}


async def upload(live: LiveDocbase, *parts: tuple[str, str, bytes, str]) -> list[str]:
    response = await live.client.post("/media", files=multipart(*parts), headers=live.auth())
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"msg", "uploadid", "ids"}
    assert body["msg"] == "OK"
    assert re.fullmatch(r"[0-9a-f]{32}", body["uploadid"])
    ids: list[str] = body["ids"]
    return ids


async def meta_list(live: LiveDocbase, **params: str) -> list[dict[str, Any]]:
    response = await live.client.get("/media/*/meta", params=params, headers=live.auth())
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def assert_error(response: httpx.Response, status: int, name: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert (body["status"], body["name"]) == (status, name)
    return body


async def test_upload_then_content_and_derivatives_without_a_key(live: LiveDocbase) -> None:
    ids = await upload(live, *FILES)
    assert len(ids) == len(FILES)
    for media_id, (_, _, data, _), mime in zip(ids, FILES, TYPES, strict=True):
        got = await live.client.get(f"/media/{media_id}")  # no key
        assert got.status_code == 200, got.text
        assert (got.content, got.headers["content-type"]) == (data, mime)
        assert got.headers["x-content-type-options"] == "nosniff"
        assert got.headers["content-length"] == str(len(data))
    expected = [((128, 85), (300, 200)), ((128, 256), (400, 800)), ((128, 64), (200, 100)),
                ((128, 64), (640, 320))]
    for media_id, (t_size, w_size) in zip(ids, expected, strict=False):
        thumb = await live.client.get(f"/media/{media_id}", params={"s": "t"})
        web = await live.client.get(f"/media/{media_id}", params={"s": "w"})
        original = await live.client.get(f"/media/{media_id}", params={"s": "o"})
        assert (thumb.status_code, web.status_code, original.status_code) == (200, 200, 200)
        assert samples.size_of(thumb.content) == t_size
        assert samples.size_of(web.content) == w_size
        assert original.content == dict(zip(ids, [f[2] for f in FILES], strict=True))[media_id]
    rotated = (await live.client.get(f"/media/{ids[1]}", params={"s": "t"})).content
    assert samples.colour_at(rotated, 0.5, 0.25) == "red"
    again = await live.client.get(f"/media/{ids[1]}", params={"s": "t"})
    assert again.content == rotated
    text = await live.client.get(f"/media/{ids[5]}", params={"s": "t"})
    assert text.content == samples.TEXT
    assert_error(await live.client.get(f"/media/{ids[0]}", params={"s": "huge"}), 400,
                 "InvalidQuery")
    assert_error(await live.client.get(f"/media/{UNKNOWN}"), 404, "NotFound")


async def test_download_cache_and_range_headers(live: LiveDocbase) -> None:
    ids = await upload(live, ("a", "shelf.png", PNG, "image/png"),
                       ("b", "Grüße 2024.txt", b"0123456789", "text/plain"),
                       ("c", "drawing.svg", samples.SVG, "image/png"),
                       ("d", "page.html", samples.HTML, "text/plain"))
    png = await live.client.get(f"/media/{ids[0]}")
    assert png.headers["content-disposition"] == 'inline; filename="shelf.png"'
    assert png.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert png.headers["etag"] == f'"{hashlib.sha256(PNG).hexdigest()[:32]}"'
    download = await live.client.get(f"/media/{ids[0]}", params={"download": "true"})
    assert download.headers["content-disposition"] == 'attachment; filename="shelf.png"'
    named = await live.client.get("/media/Grüße 2024.txt", params={"download": "true"})
    assert named.content == b"0123456789"
    assert named.headers["content-disposition"] == (
        "attachment; filename=\"Gr__e 2024.txt\"; filename*=utf-8''Gr%C3%BC%C3%9Fe%202024.txt")
    assert named.headers["cache-control"] == "public, no-cache"
    for media_id, mime in ((ids[2], "image/svg+xml"), (ids[3], "text/html; charset=utf-8")):
        hostile = await live.client.get(f"/media/{media_id}")
        assert hostile.headers["content-type"] == mime
        assert hostile.headers["content-disposition"].startswith("attachment;")
        assert hostile.headers["x-content-type-options"] == "nosniff"

    etag = png.headers["etag"]
    cached = await live.client.get(f"/media/{ids[0]}", headers={"if-none-match": etag})
    assert (cached.status_code, cached.content, cached.headers["etag"]) == (304, b"", etag)
    stale = await live.client.get(f"/media/{ids[0]}", headers={"if-none-match": '"other"'})
    assert stale.status_code == 200
    thumb = await live.client.get(f"/media/{ids[0]}", params={"s": "t"})
    assert thumb.headers["etag"] != etag

    digits = f"/media/{ids[1]}"
    for header, status, body, content_range in [
        ("bytes=2-5", 206, b"2345", "bytes 2-5/10"),
        ("bytes=7-", 206, b"789", "bytes 7-9/10"),
        ("bytes=-3", 206, b"789", "bytes 7-9/10"),
        ("bytes=8-100", 206, b"89", "bytes 8-9/10"),
        ("bytes=0-1,4-5", 200, b"0123456789", None),
    ]:
        ranged = await live.client.get(digits, headers={"range": header})
        assert (ranged.status_code, ranged.content) == (status, body), header
        assert ranged.headers.get("content-range") == content_range
    big = bytes(range(256)) * 800  # 200 KiB: streamed from the blob store, not kept
    [big_id] = await upload(live, ("big", "big.bin", big, "application/octet-stream"))
    for header, start, end in [("bytes=40000-40009", 40000, 40010),
                               ("bytes=-70000", len(big) - 70000, len(big)),
                               ("bytes=100000-", 100000, len(big))]:
        ranged = await live.client.get(f"/media/{big_id}", headers={"range": header})
        assert (ranged.status_code, ranged.content) == (206, big[start:end]), header
        assert ranged.headers["content-range"] == f"bytes {start}-{end - 1}/{len(big)}"
    assert (await live.client.get(f"/media/{big_id}")).content == big
    outside = await live.client.get(digits, headers={"range": "bytes=10-"})
    assert_error(outside, 416, "RangeNotSatisfiable")
    assert outside.headers["content-range"] == "bytes */10"
    moved = await live.client.get(digits, headers={"range": "bytes=2-5", "if-range": '"old"'})
    assert (moved.status_code, moved.content) == (200, b"0123456789")
    for path, length, mime in ((f"/media/{ids[0]}", len(PNG), "image/png"),
                               (digits, 10, "text/plain; charset=utf-8")):
        headed = await live.client.head(path)
        assert (headed.status_code, headed.content) == (200, b"")
        assert (headed.headers["content-length"], headed.headers["content-type"]) == (
            str(length), mime)
        assert headed.headers["etag"] == (await live.client.get(path)).headers["etag"]


async def test_metadata_with_q_h_and_ids_needs_a_key(live: LiveDocbase) -> None:
    ids = await upload(live, *FILES)
    one = await live.client.get(f"/media/{ids[1]}/meta", headers=live.auth())
    assert one.status_code == 200, one.text
    [record] = one.json()
    assert {k: record[k] for k in ("_id", "origname", "filesize", "mimetype", "mediatype",
                                   "width", "height", "_createdby")} == {
        "_id": ids[1], "origname": "rotated.jpg", "filesize": len(JPEG),
        "mimetype": "image/jpeg", "mediatype": "image", "width": 400, "height": 800,
        "_createdby": "api"}
    assert record["exif"]["Orientation"] == 6
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["_created"])
    big = await meta_list(live, q=json.dumps({"filesize": {"$gt": 1000}}),
                          h=json.dumps({"$orderby": {"filesize": -1},
                                        "$fields": {"origname": 1, "filesize": 1}}))
    sizes = sorted(((len(f[2]), f[1]) for f in FILES if len(f[2]) > 1000), reverse=True)
    assert [(r["filesize"], r["origname"]) for r in big] == sizes
    assert set(big[0]) == {"_id", "origname", "filesize"}
    paged = await meta_list(live, h=json.dumps({"$orderby": {"origname": 1}, "$skip": 1,
                                                "$max": 2}))
    assert [r["origname"] for r in paged] == ["banner.webp", "manual.pdf"]
    listed = await meta_list(live, ids=f"{ids[4]},{UNKNOWN},{ids[0]}")
    assert [r["_id"] for r in listed] == [ids[4], ids[0]]
    assert_error(await live.client.get("/media/*/meta", params={"q": "{bad"},
                                       headers=live.auth()), 400, "InvalidQuery")
    assert_error(await live.client.get("/media/*/meta", params={"ids": "nope"},
                                       headers=live.auth()), 400, "InvalidId")
    assert_error(await live.client.get(f"/media/{UNKNOWN}/meta", headers=live.auth()), 404,
                 "NotFound")


async def test_delete_removes_bytes_derivatives_and_metadata(live: LiveDocbase) -> None:
    ids = await upload(live, ("a", "shelf.png", PNG, "image/png"),
                       ("b", "notes.txt", samples.TEXT, "text/plain"))
    assert (await live.client.get(f"/media/{ids[0]}", params={"s": "t"})).status_code == 200
    gone = await live.client.delete(f"/media/{ids[0]}", headers=live.auth())
    assert (gone.status_code, gone.json()) == (200, {"result": [ids[0]]})
    for params in ({}, {"s": "t"}):
        assert_error(await live.client.get(f"/media/{ids[0]}", params=params), 404, "NotFound")
    with pytest.raises(Exception, match="no blob"):
        await live.db.blobs.stat(f"{ids[0]}/t")  # type: ignore[union-attr]
    assert_error(await live.client.delete(f"/media/{ids[0]}", headers=live.auth()), 404,
                 "NotFound")
    override = await live.client.post(f"/media/{ids[1]}", headers={
        **live.auth(), "x-http-method-override": "DELETE"})
    assert (override.status_code, override.json()) == (200, {"result": [ids[1]]})
    assert await meta_list(live) == []


async def test_only_the_bytes_need_no_key(live: LiveDocbase) -> None:
    [media_id] = await upload(live, ("f", "a.txt", b"a\n", "text/plain"))
    files = multipart(("f", "b.txt", b"b\n", "text/plain"))
    assert_error(await live.client.post("/media", files=files), 401, "Unauthorized")
    assert_error(await live.client.get(f"/media/{media_id}/meta"), 401, "Unauthorized")
    assert_error(await live.client.get("/media/*/meta"), 401, "Unauthorized")
    assert_error(await live.client.delete(f"/media/{media_id}"), 401, "Unauthorized")
    assert (await live.client.get(f"/media/{media_id}")).content == b"a\n"
    rest_only = {"x-apikey": await live.key(paths=["/rest/**"])}
    assert_error(await live.client.post("/media", files=files, headers=rest_only), 403,
                 "Forbidden")
    assert_error(await live.client.get(f"/media/{media_id}/meta", headers=rest_only), 403,
                 "Forbidden")
    assert_error(await live.client.delete(f"/media/{media_id}", headers=rest_only), 403,
                 "Forbidden")
    media_key = {"x-apikey": await live.key(paths=["/media/**"])}
    created = await live.client.post("/media", files=files, headers=media_key)
    assert created.status_code == 201, created.text
    listed = await live.client.get("/media/*/meta", headers=media_key)
    assert sorted(r["origname"] for r in listed.json()) == ["a.txt", "b.txt"]
    assert_error(await live.client.put("/media", headers=live.auth()), 501, "NotImplemented")


async def test_bad_uploads_get_clear_errors_and_store_nothing(live: LiveDocbase) -> None:
    over = await live.client.post("/media", headers=live.auth(), files=multipart(
        ("a", "fine.txt", b"fine\n", "text/plain"),
        ("b", "huge.bin", b"\x01" * 300_001, "application/octet-stream")))
    assert "'huge.bin'" in assert_error(over, 413, "PayloadTooLarge")["message"]
    whole = await live.client.post("/media", headers=live.auth(), files=multipart(
        *(("f", f"part{i}.bin", b"\x01" * 250_000, "x/y") for i in range(3))))
    assert "max_upload_bytes" in assert_error(whole, 413, "PayloadTooLarge")["message"]
    chunked_body, headers = raw_multipart(
        *((f'form-data; name="f"; filename="part{i}.bin"'.encode(), b"\x01" * 250_000)
          for i in range(3)))

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as it streams
        for start in range(0, len(chunked_body), 65_536):
            yield chunked_body[start:start + 65_536]

    streamed = await live.client.post("/media", content=chunked(),
                                      headers={**live.auth(), **headers})
    assert "max_upload_bytes" in assert_error(streamed, 413, "PayloadTooLarge")["message"]
    empty, headers = raw_multipart()
    assert_error(await live.client.post("/media", content=empty,
                                        headers={**live.auth(), **headers}), 400, "InvalidQuery")
    fields_only, headers = raw_multipart((b'form-data; name="title"', b"no file here"))
    assert_error(await live.client.post("/media", content=fields_only,
                                        headers={**live.auth(), **headers}), 400, "InvalidQuery")
    cut = empty.replace(b"--docbase-test-boundary--", b"--docbase-test-boundary\r\nContent-")
    assert_error(await live.client.post("/media", content=cut,
                                        headers={**live.auth(), **headers}), 400, "InvalidQuery")
    assert_error(await live.client.post("/media", json={"file": "x"}, headers=live.auth()),
                 415, "UnsupportedMediaType")
    corrupt = await live.client.post("/media", headers=live.auth(), files=multipart(
        ("a", "fine.txt", b"fine\n", "text/plain"),
        ("b", "broken.png", samples.corrupt_png(), "image/png")))
    assert "'broken.png'" in assert_error(corrupt, 422, "InvalidImage")["message"]
    bomb = await live.client.post("/media", headers=live.auth(), files=multipart(
        ("b", "bomb.png", samples.bomb_png(), "image/png")))
    assert "'bomb.png'" in assert_error(bomb, 422, "InvalidImage")["message"]
    assert await meta_list(live) == []


async def test_truncated_images_and_hostile_names(live: LiveDocbase) -> None:
    for name, data in (("cut.jpg", samples.truncated_jpeg()),
                       ("cut.png", samples.truncated_png())):
        refused = await live.client.post("/media", headers=live.auth(), files=multipart(
            ("a", name, data, "image/jpeg")))
        assert assert_error(refused, 422, "InvalidImage")["message"].startswith(
            f"image {name!r} cannot be read")
    assert await meta_list(live) == []
    body, headers = raw_multipart(
        (b'form-data; name="a"; filename="../../etc/passwd"', b"one\n"),
        (b'form-data; name="b"; filename="evil\x00name.txt"', b"two\n"),
        (b'form-data; name="c"; filename="..\\..\\boot.ini"', b"three\n"),
        (b"form-data; name=\"d\"; filename*=UTF-8''%C3%A9t%C3%A9.txt", b"four\n"))
    response = await live.client.post("/media", content=body, headers={**live.auth(), **headers})
    assert response.status_code == 201, response.text
    listed = await meta_list(live, ids=",".join(response.json()["ids"]))
    assert [r["origname"] for r in listed] == ["passwd", "evilname.txt", "boot.ini", "été.txt"]
    assert (await live.client.get("/media/passwd")).content == b"one\n"
    assert (await live.client.get("/health")).status_code == 200


async def test_a_file_deleted_while_it_downloads_completes_or_is_cut_short_never_500(
    stores: Any, tmp_path: Path,
) -> None:
    store, blobs = stores
    served = Database(store, blobs, name="main", limits=Limits(max_upload_file_bytes=2**25))
    other_process = Database(store, blobs, name="main")
    data = b"".join(hashlib.sha256(n.to_bytes(4, "big")).digest() for n in range(393_216))  # 12 MiB
    async with live_docbase({"main": served}, tmp_path) as live:
        [media_id] = await upload(live, ("f", "big.bin", data, "application/octet-stream"))
        received = bytearray()
        try:
            async with live.client.stream("GET", f"/media/{media_id}") as response:
                assert response.status_code == 200
                assert response.headers["content-length"] == str(len(data))
                async for chunk in response.aiter_bytes():
                    if not received:
                        deleted = await live.client.delete(f"/media/{media_id}",
                                                           headers=live.auth())
                        assert deleted.status_code == 200, deleted.text
                    received += chunk
            cut = False
        except httpx.RemoteProtocolError:  # closed short of its Content-Length
            cut = True
        assert data.startswith(received)
        assert cut == (len(received) < len(data))
        assert_error(await live.client.get(f"/media/{media_id}"), 404, "NotFound")

        # deleted by another process after this one opened (and cached) it: 404, no byte
        [other] = await upload(live, ("f", "big.bin", data[:100_000], "text/plain"))
        first = await live.client.get(f"/media/{other}", headers={"range": "bytes=0-9"})
        assert first.status_code == 206
        await other_process.media.delete(other)
        assert_error(await live.client.get(f"/media/{other}"), 404, "NotFound")
        assert (await live.client.get("/health")).status_code == 200
