"""The collection browser's cells and columns (docbase/http/console/columns.py)."""

from __future__ import annotations

from docbase.http.console.columns import cell, default_columns, known_fields, shown_columns


def test_dates_read_as_dates_and_other_text_stays_as_it_is() -> None:
    assert cell("2024-03-05T14:07:09.120Z") == "2024-03-05 14:07 UTC"
    assert cell("2024-03-05T14:07+02:00") == "2024-03-05 14:07 +02:00"
    assert cell("2024-03-05") == "2024-03-05"
    assert cell("44.2/6") == "44.2/6"
    assert cell({"a": [1, 2]}) == '{"a":[1,2]}'
    assert cell("invoice_\u202efdp.exe") == "invoice_\\u202efdp.exe"
    assert cell("x" * 100) == "x" * 79 + "…"


def test_every_field_can_be_chosen_including_system_fields() -> None:
    documents = [{"_id": "1", "_created": "2024", "b": 1, "a": 2}, {"_id": "2", "c": 3}]
    fields = known_fields(["title"], documents)
    assert fields[:4] == ["title", "b", "a", "c"]
    assert "_created" in fields
    assert "_version" in fields
    assert "_id" not in fields  # always the first column
    assert shown_columns([], [], documents) == default_columns([], documents) == ["b", "a", "c"]
    assert shown_columns(["_created", "a", "a", "_id"], ["title"], documents) == [
        "_created", "a"]
