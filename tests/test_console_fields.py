"""Typed inputs of the document editor (docbase/http/console/fields.py)."""

from __future__ import annotations

from docbase.core.schema.model import FieldSpec, FieldType
from docbase.http.console.fields import inputs, joined, split, submitted

SPECS = [FieldSpec("born", FieldType.DATE), FieldSpec("tags", FieldType.TAGS),
         FieldSpec("pages", FieldType.NUMBER), FieldSpec("mail", FieldType.EMAIL),
         FieldSpec("at", FieldType.TIME)]


def test_tags_are_one_comma_separated_line_and_come_back_as_a_list() -> None:
    values, rest = split(SPECS, {"tags": ["red", "blue"], "born": "2020-02-29",
                                 "odd": 1})
    assert values == {"tags": "red, blue", "born": "2020-02-29"}
    assert rest == {"odd": 1}
    body = joined(SPECS, submitted(SPECS, {"f-1": "red, green ,", "f-0": "2021-01-02",
                                           "f-2": "12"}), rest)
    assert body == {"odd": 1, "tags": ["red", "green"], "born": "2021-01-02", "pages": 12}
    _, kept = split(SPECS, {"tags": ["a,b"]})  # a tag holding a comma stays in the JSON
    assert kept == {"tags": ["a,b"]}


def test_dates_and_times_get_pickers_only_where_the_text_has_their_form() -> None:
    shown = {i["name"]: (i["html_type"], i["mode"]) for i in inputs(
        SPECS, {"born": "2020-02-29", "at": "14:07"})}
    assert shown == {"born": ("date", "text"), "tags": ("text", "text"),
                     "pages": ("text", "decimal"), "mail": ("text", "email"),
                     "at": ("time", "text")}
    odd = {i["name"]: i["html_type"] for i in inputs(SPECS, {"born": "2020-02-29T10:00Z"})}
    assert odd["born"] == "text"  # a picker would show it empty and lose it on save


def test_lookup_and_media_fields_are_lines_of_ids() -> None:
    specs = [FieldSpec("cover", FieldType.IMAGE),
             FieldSpec("author", FieldType.LOOKUP, collection="people")]
    values, rest = split(specs, {"cover": ["m1", "m2"],
                                 "author": [{"_id": "p1", "name": "Ann"}]})
    assert (values, rest) == ({"cover": "m1, m2", "author": "p1"}, {})
    body = joined(specs, submitted(specs, {"f-0": "m3", "f-1": "p1, p2"}), {})
    assert body == {"cover": ["m3"], "author": [{"_id": "p1"}, {"_id": "p2"}]}
    picked = inputs(specs, values, (), {"cover": [("m1", "cat.png")]})
    assert [i["choices"] for i in picked] == [[("m1", "cat.png")], []]
