"""A document's schema fields as form inputs, next to the JSON of its other fields.

Where the collection has a schema, the editor shows one labelled input per declared
field of a single-value type (text, numbers, yes/no, dates, options), with the
validation messages of that field beside it; every other field (arrays, objects,
fields no schema declares) stays in the JSON box. Dates and times use the browser's
pickers where the stored text has their form, numbers a decimal keyboard; tags, media
ids (images, files) and lookup ids one comma-separated line, with a list of choices
to pick from (:mod:`~docbase.http.console.pickers`). Saving joins both: an empty input
leaves its field out, a number field whose text reads as a number is stored as one
(else as the text, which the schema then refuses with its message).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from docbase.core.errors import FieldError
from docbase.core.schema.model import NUMBER_TYPES, CollectionSchema, FieldSpec, FieldType

FORM_TYPES = frozenset({
    FieldType.TEXT, FieldType.TEXTAREA, FieldType.EMAIL, FieldType.URL, FieldType.NUMBER,
    FieldType.FLOAT_NUMBER, FieldType.MONEY, FieldType.BOOL, FieldType.DATE,
    FieldType.DATETIME, FieldType.TIME, FieldType.OPTION, FieldType.TAGS, FieldType.IMAGE,
    FieldType.FILE, FieldType.LOOKUP,
})
"""Field types edited with an input of their own."""
DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
TIME_TEXT = re.compile(r"\d{2}:\d{2}(:\d{2})?")


def html_type(spec: FieldSpec, value: str) -> str:
    """The ``type`` of a field's ``<input>``: the browser's date or time picker.

    Only where the stored text has the picker's form; other text stays editable as text.
    """
    if spec.type == FieldType.DATE and (not value or DATE_TEXT.fullmatch(value)):
        return "date"
    if spec.type == FieldType.TIME and (not value or TIME_TEXT.fullmatch(value)):
        return "time"
    return "text"


INPUT_MODES = {FieldType.EMAIL: "email", FieldType.URL: "url", FieldType.NUMBER: "decimal",
               FieldType.FLOAT_NUMBER: "decimal", FieldType.MONEY: "decimal"}
"""The keyboard a phone shows for a field (the text is checked by the schema)."""


def form_specs(schema: CollectionSchema | None) -> list[FieldSpec]:
    """The schema's fields that get an input, in declared order."""
    return [] if schema is None else [f for f in schema.fields if f.type in FORM_TYPES]


LIST_TYPES = frozenset({FieldType.TAGS, FieldType.IMAGE, FieldType.FILE, FieldType.LOOKUP})
"""Array fields edited as one comma-separated line: tags, media ids, lookup ids."""
MEDIA_FIELDS = {FieldType.IMAGE: "image", FieldType.FILE: "file"}
"""The media an image or file field's search box finds (``/_/pick-media/<kind>``)."""


def _item(value: Any, spec: FieldSpec) -> str | None:
    if spec.type == FieldType.LOOKUP and isinstance(value, dict):
        value = value.get("_id")  # a lookup reads as the documents it names
    return value if isinstance(value, str) and "," not in value else None


def _shown(value: Any, spec: FieldSpec) -> str | None:
    if spec.type in LIST_TYPES:
        items = [_item(v, spec) for v in value] if isinstance(value, list) else [None]
        return None if None in items else ", ".join(i for i in items if i is not None)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None  # an array or object stays in the JSON box


def split(specs: list[FieldSpec], document: dict[str, Any]) -> tuple[dict[str, str],
                                                                     dict[str, Any]]:
    """``(input values by field, the fields left for the JSON box)``."""
    values, rest = {}, dict(document)
    for spec in specs:
        if spec.name in rest and (shown := _shown(rest[spec.name], spec)) is not None:
            values[spec.name] = shown
            del rest[spec.name]
    return values, rest


def submitted(specs: list[FieldSpec], form: dict[str, Any]) -> dict[str, str]:
    """The raw texts of the inputs (``f-0``, ``f-1``, ... in the schema's order)."""
    return {spec.name: text for i, spec in enumerate(specs)
            if isinstance(text := form.get(f"f-{i}"), str)}


def joined(specs: list[FieldSpec], texts: dict[str, str], rest: dict[str, Any]
           ) -> dict[str, Any]:
    """The document to store: the JSON box's fields, overridden by the non-empty inputs."""
    body = dict(rest)
    for spec in specs:
        text = texts.get(spec.name, "").strip()
        if text:
            body[spec.name] = typed(spec, text)
    return body


def typed(spec: FieldSpec, text: str) -> Any:
    """The value an input's ``text`` stores: lists, yes/no and numbers read as such."""
    if spec.type in LIST_TYPES:
        items = [item.strip() for item in text.split(",") if item.strip()]
        return [{"_id": i} for i in items] if spec.type == FieldType.LOOKUP else items
    if spec.type == FieldType.BOOL and text in ("true", "false"):
        return text == "true"
    if spec.type in NUMBER_TYPES:
        try:
            number = msgspec.json.decode(text)
        except msgspec.DecodeError:
            return text
        return number if isinstance(number, int | float) else text
    return text


def inputs(specs: list[FieldSpec], values: dict[str, str],
           errors: tuple[FieldError, ...] = (),
           choices: dict[str, list[tuple[str, str]]] | None = None) -> list[dict[str, Any]]:
    """What the template needs of each input: name, type, value, its messages.

    ``choices``: the ``(id, label)`` a lookup or media field offers (:mod:`pickers`);
    ``target``: the collection a lookup field's search box searches; ``media``: the
    files an image or file field's box searches (``image`` or ``file``).
    """
    return [{"index": i, "name": s.name, "type": str(s.type), "value": values.get(s.name, ""),
             "html_type": html_type(s, values.get(s.name, "")),
             "mode": INPUT_MODES.get(s.type, "text"),
             "choices": (choices or {}).get(s.name, []),
             "target": s.collection if s.type == FieldType.LOOKUP else None,
             "media": MEDIA_FIELDS.get(s.type),
             "required": s.required, "options": list(s.options or ()),
             "messages": [m for e in errors if e.field.split(".")[0] == s.name
                          for m in e.message]}
            for i, s in enumerate(specs)]
