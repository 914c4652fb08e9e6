"""Every field type accepts its good values (normalised) and refuses bad ones by message."""

from __future__ import annotations

from typing import Any

import pytest

from docbase import InvalidQuery, ValidationFailed
from docbase.core.schema import FieldSpec, FieldType, parse_schema
from docbase.core.schema.values import BadValue, coerce

OID = "0123456789abcdef01234567"

GOOD: list[tuple[str, dict[str, Any], Any, Any]] = [
    ("text", {}, "hello", "hello"),
    ("text", {}, "", ""),
    ("textarea", {}, "line 1\nline 2", "line 1\nline 2"),
    ("number", {}, 42, 42),
    ("number", {}, "42", 42),
    ("number", {}, 3.0, 3),
    ("number", {}, "-7", -7),
    ("float_number", {}, 1.5, 1.5),
    ("float_number", {}, "2.25", 2.25),
    ("float_number", {}, 2, 2.0),
    ("money", {}, 12.34, 12.34),
    ("money", {}, "10", 10),
    ("bool", {}, True, True),
    ("bool", {}, "true", True),
    ("bool", {}, "on", True),
    ("bool", {}, "0", False),
    ("bool", {}, "False", False),
    ("date", {}, "2024-05-01", "2024-05-01T00:00:00.000Z"),
    ("date", {}, "2024-05-01T22:30:00-05:00", "2024-05-01T00:00:00.000Z"),
    ("date", {}, 0, "1970-01-01T00:00:00.000Z"),
    ("datetime", {}, "2024-05-01T22:30:00-05:00", "2024-05-02T03:30:00.000Z"),
    ("datetime", {}, "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.000Z"),
    ("datetime", {}, "2024-05-01", "2024-05-01T00:00:00.000Z"),
    ("datetime", {}, 1714557600000, "2024-05-01T10:00:00.000Z"),
    ("datetime", {}, {"$date": "2024-05-01T10:00:00.5Z"}, "2024-05-01T10:00:00.500Z"),
    ("time", {}, "09:30", "09:30:00"),
    ("time", {}, "23:59:59", "23:59:59"),
    ("time", {}, "07:05:01.250", "07:05:01.250"),
    ("email", {}, "ann@example.com", "ann@example.com"),
    ("email", {}, " Ann@Example.COM ", "Ann@example.com"),
    ("url", {}, "https://example.com/a?b=1", "https://example.com/a?b=1"),
    ("url", {}, "mailto:ann@example.com", "mailto:ann@example.com"),
    ("json", {}, {"any": [1, "thing"]}, {"any": [1, "thing"]}),
    ("json", {}, [1, 2], [1, 2]),
    ("option", {"options": ["red", "green"]}, "green", "green"),
    ("tags", {}, ["a", "b"], ["a", "b"]),
    ("tags", {}, "a, b,,c", ["a", "b", "c"]),
    ("image", {}, OID, [OID]),
    ("file", {}, [OID.upper()], [OID]),
    ("lookup", {"collection": "people"}, OID, [{"_id": OID}]),
    ("lookup", {"collection": "people"}, [{"_id": OID, "name": "x"}], [{"_id": OID}]),
    ("password", {}, "s3cret-enough", "s3cret-enough"),
]

BAD: list[tuple[str, dict[str, Any], Any, str]] = [
    ("text", {}, 5, "must be a string"),
    ("textarea", {}, ["x"], "must be a string"),
    ("number", {}, "forty", "must be a number"),
    ("number", {}, 1.5, "must be a whole number"),
    ("number", {}, True, "must be a number"),
    ("number", {}, 2.0 ** 60, "must be between -2^53 and 2^53"),
    ("float_number", {}, "1e999", "must be a number"),
    ("float_number", {}, [1], "must be a number"),
    ("money", {}, 1.234, "must have at most 2 decimal places"),
    ("money", {}, "abc", "must be a number"),
    ("bool", {}, "maybe", "must be true or false"),
    ("bool", {}, 1, "must be true or false"),
    ("date", {}, "2024-13-01", "must be a date (YYYY-MM-DD)"),
    ("date", {}, True, "must be a date (ISO 8601 text or milliseconds since 1970)"),
    ("datetime", {}, "yesterday", "must be a date (ISO 8601 text or milliseconds since 1970)"),
    ("datetime", {}, [2024], "must be a date (ISO 8601 text or milliseconds since 1970)"),
    ("time", {}, "25:00", "must be a time of day (HH:MM or HH:MM:SS)"),
    ("time", {}, "10:00+02:00", "must be a time of day without an offset"),
    ("time", {}, 930, "must be a time of day (HH:MM or HH:MM:SS)"),
    ("email", {}, "not an address", "must be a valid email address"),
    ("email", {}, "a@b@c", "must be a valid email address"),
    ("url", {}, "example.com", "must be a valid URL (http, https, ftp or mailto)"),
    ("url", {}, "javascript:alert(1)", "must be a valid URL (http, https, ftp or mailto)"),
    ("url", {}, "http://exa mple.com", "must be a valid URL (http, https, ftp or mailto)"),
    ("option", {"options": ["red", "green"]}, "blue", "must be one of: red, green"),
    ("option", {"options": ["red"]}, 1, "must be one of: red"),
    ("tags", {}, [1, 2], "must be an array of strings (or one comma-separated string)"),
    ("image", {}, ["nope"], "must be an array of media ids"),
    ("file", {}, 12, "must be an array of media ids"),
    ("lookup", {"collection": "people"}, "nope",
     "must be an array of ids or of objects with an _id"),
    ("lookup", {"collection": "people"}, [{"id": OID}],
     "must be an array of ids or of objects with an _id"),
    ("password", {}, 12345678, "must be a string"),
    ("child", {}, [{"a": 1}],
     "is a subcollection: create its documents with POST /rest/<collection>/<id>/f"),
]


def spec(kind: str, **attributes: Any) -> FieldSpec:
    return FieldSpec("f", FieldType(kind), **attributes)


def test_every_field_type_has_good_and_bad_cases() -> None:
    assert {kind for kind, *_ in GOOD} | {"child"} == {t.value for t in FieldType}
    assert {kind for kind, *_ in BAD} == {t.value for t in FieldType} - {"json"}


@pytest.mark.parametrize(("kind", "attributes", "value", "stored"), GOOD,
                         ids=[f"{k}-{v!r}" for k, _, v, _ in GOOD])
def test_good_values_are_stored_normalised(kind: str, attributes: dict[str, Any],
                                           value: Any, stored: Any) -> None:
    result = coerce(spec(kind, **attributes), value)
    assert result == stored
    assert type(result) is type(stored)


@pytest.mark.parametrize(("kind", "attributes", "value", "message"), BAD,
                         ids=[f"{k}-{v!r}" for k, _, v, _ in BAD])
def test_bad_values_are_refused_with_their_message(kind: str, attributes: dict[str, Any],
                                                   value: Any, message: str) -> None:
    with pytest.raises(BadValue) as refused:
        coerce(spec(kind, **attributes), value)
    assert refused.value.messages == (message,)


@pytest.mark.parametrize("kind", ["number", "bool", "date", "email", "image", "lookup"])
def test_an_empty_string_is_no_value_except_for_text(kind: str) -> None:
    attributes = {"collection": "c"} if kind == "lookup" else {}
    assert coerce(spec(kind, **attributes), "") is None
    assert coerce(spec(kind, **attributes), None) is None


def test_min_and_max_bound_values_lengths_and_counts() -> None:
    assert coerce(spec("number", min=1, max=10), 10) == 10
    with pytest.raises(BadValue, match=r"must be at least 1$"):
        coerce(spec("number", min=1), 0)
    with pytest.raises(BadValue, match=r"must be at most 2\.5$"):
        coerce(spec("float_number", max=2.5), 3)
    with pytest.raises(BadValue, match="must be at least 3 characters"):
        coerce(spec("text", min=3), "ab")
    with pytest.raises(BadValue, match="must be at most 2 elements"):
        coerce(spec("tags", max=2), ["a", "b", "c"])
    with pytest.raises(BadValue) as both:
        coerce(spec("text", max=2, pattern="^[0-9]+$"), "abc")
    assert both.value.messages == ("must be at most 2 characters",
                                   "does not match the pattern ^[0-9]+$")


def test_pattern_searches_like_regex() -> None:
    serial = spec("text", pattern="^[A-Z]{2}-[0-9]{4}$")
    assert coerce(serial, "AB-1234") == "AB-1234"
    with pytest.raises(BadValue, match="does not match the pattern"):
        coerce(serial, "ab-1234")


def test_a_backtracking_pattern_is_refused_not_hung() -> None:
    with pytest.raises(BadValue, match="takes too long"):
        coerce(spec("text", pattern="^(a|a)*$"), "a" * 40 + "b")


def test_parse_schema_lists_every_problem() -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_schema("people", {"fields": [
            {"name": "colour", "type": "option"},
            {"name": "tags", "type": "tags", "unique": True},
            {"name": "n", "type": "number", "min": 5, "max": 1},
            {"name": "friend", "type": "lookup"},
            {"name": "code", "type": "text", "pattern": "(?<=a)b"},
            {"name": "n", "type": "text"},
            {"name": "size", "type": "huge"},
            {"name": "_id", "type": "text"},
        ]})
    listed = [(f.field, f.message) for f in refused.value.fields]
    problems = dict(listed[:5] + listed[6:])
    assert problems["fields.colour"] == ("an option field needs a non-empty options array",)
    assert problems["fields.tags"] == ("a tags field cannot be unique",)
    assert problems["fields.n"] == ("min is greater than max",)
    assert problems["fields.friend"] == ("a lookup field needs the collection it refers to",)
    assert "pattern" in problems["fields.code"][0]
    assert "Invalid enum value 'huge'" in problems["fields.size"][0]
    assert problems["fields._id"][0].startswith("a field name may not")
    assert listed[5] == ("fields.n", ("is declared twice",))
    assert len(listed) == 8


@pytest.mark.parametrize("body", [[], {"fields": {}}, {"name": "other", "fields": []},
                                  {"fields": [], "extra": 1}])
def test_parse_schema_refuses_a_malformed_body(body: Any) -> None:
    with pytest.raises(InvalidQuery):
        parse_schema("people", body)


def test_parse_schema_keeps_the_declared_order_and_round_trips() -> None:
    body = {"fields": [{"name": "b", "type": "text", "required": True},
                       {"name": "a", "type": "option", "options": ["x"]}]}
    schema = parse_schema("people", body)
    assert [f.name for f in schema.fields] == ["b", "a"]
    assert schema.to_json() == {"name": "people", "fields": body["fields"]}


def test_a_default_must_fit_its_own_field() -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_schema("people", {"fields": [
            {"name": "age", "type": "number", "default": "old"},
            {"name": "level", "type": "option", "options": ["a"], "default": "b"}]})
    assert [(f.field, f.message) for f in refused.value.fields] == [
        ("fields.age", ("default must be a number",)),
        ("fields.level", ("default must be one of: a",))]
    assert parse_schema("people", {"fields": [
        {"name": "seen", "type": "datetime", "default": "$now"}]}).fields[0].default == "$now"
