"""Hostile requests over HTTPS on every engine: each answers its documented status.

One ``docbase serve`` per engine (memory, SQLite, PostgreSQL, the Mongo wire server)
receives the whole corpus. Every request is written on the wire as given
(``tests/raw_https.py``), so invalid UTF-8, NUL bytes in a path, lying headers and
bodies nested 100,000 deep reach the server exactly. No case may answer 5xx, hang or
store anything; ``docs/reliability.md`` lists the promises and these tests' names.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import NamedTuple

import pytest

from tests.raw_https import RawResponse, exchange, request_bytes
from tests.test_serve_harness import Served

DEEP = 100_000


class Case(NamedTuple):
    """One hostile request and the statuses it may answer."""

    name: str
    method: str
    target: str
    body: bytes = b""
    headers: dict[str, str] | None = None
    expected: frozenset[int] = frozenset({400})
    json_error: bool = True
    """Whether the answer is docbase's JSON error (not a refusal by the HTTP server)."""


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


JSON_HEADERS = {"content-type": "application/json"}

CASES = [
    Case("invalid_utf8_body", "POST", "/rest/hostile", b'{"name": "\xff\xfe"}', JSON_HEADERS),
    Case("invalid_json_body", "POST", "/rest/hostile", b'{"name": ', JSON_HEADERS),
    Case("body_arrays_100000_deep", "POST", "/rest/hostile",
         b"[" * DEEP + b"]" * DEEP, JSON_HEADERS),
    Case("body_objects_100000_deep", "POST", "/rest/hostile",
         b'{"a":' * DEEP + b"1" + b"}" * DEEP, JSON_HEADERS),
    Case("body_array_in_document_100000_deep", "POST", "/rest/hostile",
         b'{"a":' + b"[" * DEEP + b"]" * DEEP + b"}", JSON_HEADERS),
    Case("put_body_100000_deep", "PUT", "/rest/hostile/5f0000000000000000000000",
         b'{"$set": {"a": ' + b"[" * DEEP + b"]" * DEEP + b"}}", JSON_HEADERS),
    # a URL this long is refused by the HTTP server itself (431, as for long headers)
    Case("q_100000_deep", "GET", "/rest/hostile?q=" + _q('{"a":' * DEEP + "1" + "}" * DEEP),
         expected=frozenset({414, 431}), json_error=False),
    Case("h_100000_deep", "GET", "/rest/hostile?h=" + _q("[" * DEEP + "]" * DEEP),
         expected=frozenset({414, 431}), json_error=False),
    Case("q_3000_deep", "GET", "/rest/hostile?q=" + _q('{"a":' * 3000 + "1" + "}" * 3000)),
    Case("h_10000_deep", "GET", "/rest/hostile?h=" + _q("[" * 10_000 + "]" * 10_000)),
    Case("delete_q_10000_deep", "DELETE", "/rest/hostile/*?q="
         + _q("[" * 10_000 + "]" * 10_000)),
    Case("q_invalid_utf8", "GET", "/rest/hostile?q=%7B%22a%22%3A%22%FF%22%7D"),
    Case("number_beyond_float", "POST", "/rest/hostile", b'{"n": 1e400}', JSON_HEADERS),
    Case("negative_number_beyond_float", "POST", "/rest/hostile", b'{"n": -1e400}',
         JSON_HEADERS),
    Case("integer_beyond_int64", "POST", "/rest/hostile",
         b'{"n": 123456789012345678901234567890}', JSON_HEADERS),
    Case("integer_below_int64", "POST", "/rest/hostile",
         b'{"n": -9223372036854775809}', JSON_HEADERS),
    Case("integer_beyond_int64_in_q", "GET",
         "/rest/hostile?q=" + _q('{"n": 99999999999999999999999}')),
    Case("lone_surrogate_escape", "POST", "/rest/hostile", b'{"s": "\\ud800"}',
         JSON_HEADERS),
    Case("lone_surrogate_escape_in_key", "POST", "/rest/hostile", b'{"\\udfff": 1}',
         JSON_HEADERS),
    Case("lone_surrogate_in_q", "GET", "/rest/hostile?q=" + _q('{"s": "\\ud800"}')),
    # PostgreSQL cannot store NUL in jsonb, BSON not in a key: every engine refuses it
    Case("nul_in_value", "POST", "/rest/hostile", b'{"a": "x\\u0000y"}', JSON_HEADERS),
    Case("nul_in_patched_value", "PATCH", "/rest/hostile/5f0000000000000000000000",
         b'{"a": ["\\u0000"]}', JSON_HEADERS),
    Case("nan", "POST", "/rest/hostile", b'{"n": NaN}', JSON_HEADERS),
    Case("infinity", "POST", "/rest/hostile", b'{"n": Infinity}', JSON_HEADERS),
    Case("negative_infinity", "POST", "/rest/hostile", b'{"n": -Infinity}', JSON_HEADERS),
    Case("collection_with_encoded_slash", "GET", "/rest/a%2Fb",
         expected=frozenset({400, 404})),
    Case("collection_dot_dot", "GET", "/rest/..", expected=frozenset({400, 404})),
    Case("collection_encoded_dot_dot", "POST", "/rest/%2E%2E", b"{}", JSON_HEADERS,
         expected=frozenset({400, 404})),
    Case("collection_with_encoded_nul", "POST", "/rest/a%00b", b"{}", JSON_HEADERS),
    Case("collection_with_raw_nul", "GET", "/rest/a\x00b", expected=frozenset({400}),
         json_error=False),
    Case("collection_of_10000_characters", "POST", "/rest/" + "c" * 10_000, b"{}",
         JSON_HEADERS, expected=frozenset({400, 414})),
    Case("document_id_with_nul", "GET", "/rest/hostile/a%00b"),
    Case("header_of_1_mb", "GET", "/rest/hostile", headers={"x-junk": "a" * 1024 * 1024},
         expected=frozenset({400, 413, 431}), json_error=False),
    Case("content_type_image_for_json", "POST", "/rest/hostile", b'{"a": 1}',
         {"content-type": "image/png"}, expected=frozenset({415})),
    Case("content_type_json_for_form", "POST", "/rest/hostile", b"a=1&b=2", JSON_HEADERS),
    Case("content_type_form_for_invalid_utf8", "POST", "/rest/hostile", b"a=%FF\xff",
         {"content-type": "application/x-www-form-urlencoded"}),
    Case("content_type_multipart_without_boundary", "POST", "/rest/hostile", b"{}",
         {"content-type": "multipart/form-data"}, expected=frozenset({415})),
    Case("content_length_shorter_than_body", "POST", "/rest/hostile", b'{"a": 1}',
         {"content-type": "application/json", "content-length": "3"}),
    Case("content_length_not_a_number", "POST", "/rest/hostile", b"{}",
         {"content-type": "application/json", "content-length": "abc"},
         expected=frozenset({400}), json_error=False),
    Case("content_length_of_10_gb_refused_before_reading", "POST", "/rest/hostile", b"{}",
         {"content-type": "application/json", "content-length": str(10 * 1024**3)},
         expected=frozenset({413})),
    Case("method_override_unknown", "POST", "/rest/hostile", b"{}",
         {"content-type": "application/json", "x-http-method-override": "TRACE"}),
    Case("query_parameter_with_nul", "GET", "/rest/hostile?max=1%00"),
    Case("skip_beyond_every_integer_type", "GET", "/rest/hostile?skip=99999999999999999999"),
    Case("skip_one_past_int64", "GET", "/rest/hostile?skip=9223372036854775808"),
    Case("skip_past_the_bound", "GET", "/rest/hostile?skip=9007199254740992"),
    Case("max_one_past_int64", "GET", "/rest/hostile?max=9223372036854775808"),
    Case("hint_skip_one_past_int64", "GET",
         "/rest/hostile?h=" + _q('{"$skip": 9223372036854775808}')),
    Case("skip_of_unicode_digits", "GET", "/rest/hostile?skip=" + _q("\u00b2")),
    Case("sort_on_dollar_path", "GET", "/rest/hostile?sort=%24where"),
    Case("q_with_where_operator", "GET", "/rest/hostile?q=" + _q('{"$where": "1"}')),
    Case("q_proto_pollution", "GET",
         "/rest/hostile?q=" + _q('{"__proto__": {"$gt": 1}, "a": {"$in": 5}}')),
]


@pytest.fixture(scope="module")
def served(engine_server: Served) -> Served:
    """The engine's ``docbase serve`` (``tests/conftest.py``), for the whole corpus."""
    return engine_server


def send(served: Served, case: Case, key: str) -> RawResponse:
    """Send one case with the full-access key in its headers."""
    headers = {"x-apikey": key, **(case.headers or {})}
    request = request_bytes(case.method, case.target, headers, case.body)
    context = served.ssl_context()
    return exchange(served.port, context, request, timeout=30)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hostile_request_answers_its_documented_status(served: Served, case: Case) -> None:
    answer = send(served, case, served.admin_key)
    assert answer.status in case.expected, (case.name, answer.status, answer.body[:300])
    if case.json_error:
        error = json.loads(answer.body)
        assert error["status"] == answer.status
        assert error["name"], error
        assert error["message"], error


HOSTILE_KEYS = {
    "$where": "function () { return true }",
    "$set": {"a": 1},
    "$gt": 5,
    "a.b": 1,
    "__proto__": {"polluted": True},
    "constructor": {"prototype": {"x": 1}},
    "%24escaped": "looks like the Mongo adapter's own escape",
    "nested": {"$in": [1, 2], "x.y": {"$regex": ".*"}, "%00": None, "%2E": 1},
    "values": ["\u2028\u2029", "\U0001f600", "$where", "a.b", "%00"],
    "a\u0000b": 1,
    "\u0001": {"\u0000": "stored as U+0001 U+0001", "x\u0001\u0001\u0001\u0002y": 2},
}
"""Keys and values that must be stored and read back exactly, never interpreted."""


def test_document_keys_are_stored_and_read_back_exactly(served: Served) -> None:
    admin = served.admin_key
    created = served.request("POST", "/rest/keys", key=admin, json=HOSTILE_KEYS)
    assert created.status_code == 201, created.text
    ident = created.json()["_id"]
    read = served.request("GET", f"/rest/keys/{ident}", key=admin).json()
    assert {k: v for k, v in read.items() if k != "_id"} == HOSTILE_KEYS
    patched = served.request("PATCH", f"/rest/keys/{ident}", key=admin,
                             json={"nested": {"$exists": False, "k.k": "\\u0000"}})
    assert patched.status_code == 200, patched.text
    read = served.request("GET", f"/rest/keys/{ident}", key=admin).json()
    assert read["nested"] == {"$exists": False, "k.k": "\\u0000"}
    assert read["a.b"] == 1
    patched = served.request("PATCH", f"/rest/keys/{ident}", key=admin,
                             json={"n\u0000": {"\u0000": 1}})
    assert patched.status_code == 200, patched.text
    read = served.request("GET", f"/rest/keys/{ident}", key=admin).json()
    assert read["\u0001"] == HOSTILE_KEYS["\u0001"]
    assert read["n\u0000"] == {"\u0000": 1}
    for q in ({"a\u0000b": 1}, {"\u0001.x\u0001\u0001\u0001\u0002y": 2},
              {"n\u0000.\u0000": {"$gt": 0}}):
        found = served.request("GET", "/rest/keys", key=admin, params={
            "q": json.dumps(q), "sort": "a\u0000b"})
        assert [doc["_id"] for doc in found.json()] == [ident], (q, found.text)
    found = served.request("GET", "/rest/keys", key=admin,
                           params={"q": '{"values": "$where"}'}).json()
    assert [doc["_id"] for doc in found] == [ident]
    # a path over a string: the Mongo adapter reads, applies and replaces the document,
    # whose top-level "$where" MongoDB would read as an operator if stored as it is
    patched = served.request("PATCH", f"/rest/keys/{ident}", key=admin,
                             json={"values.1": {"$where": "x.y"}})
    assert patched.status_code == 200, patched.text
    read = served.request("GET", f"/rest/keys/{ident}", key=admin).json()
    assert read["values"][1] == {"$where": "x.y"}
    assert {k: v for k, v in read.items() if k.startswith("$")} == {
        k: v for k, v in HOSTILE_KEYS.items() if k.startswith("$")}


def test_duplicate_keys_keep_the_last_value(served: Served) -> None:
    created = exchange(served.port, served.ssl_context(), request_bytes(
        "POST", "/rest/duplicates", {"x-apikey": served.admin_key, **JSON_HEADERS},
        b'{"a": 1, "a": 2, "b": {"c": 1, "c": "last"}}'))
    assert created.status == 201, created.body
    document = json.loads(created.body)
    assert (document["a"], document["b"]) == (2, {"c": "last"})


def test_refused_requests_stored_nothing(served: Served) -> None:
    listed = served.request("GET", "/rest/hostile", key=served.admin_key)
    assert listed.status_code == 200, listed.text
    assert listed.json() == []


def test_server_still_answers_after_the_corpus(served: Served) -> None:
    assert served.request("GET", "/health").status_code == 200
    created = served.request("POST", "/rest/afterwards", key=served.admin_key,
                             json={"ok": True})
    assert created.status_code == 201, created.text

