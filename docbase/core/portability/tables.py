"""Documents as NDJSON lines and CSV rows, both ways.

CSV has no nesting and no types, so: a nested value (object or array) is written as its
JSON text in one cell, ``null`` and a missing field as an empty cell, ``true``/``false``
and numbers as JSON writes them. Read back, an empty cell leaves the field out, a cell
starting with ``{`` or ``[`` that holds valid JSON becomes that value, and the rest
stay strings, which the schema of the collection (where it has one) then types in the
validate stage, as it types a form (``"12"`` into a number field becomes 12). A row's
columns are the header's; ``docs/portability.md`` states the rules.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.untrusted_json import check_bounds, decode_untrusted

_encode = msgspec.json.encode


def line_error(line: int, reason: str) -> InvalidQuery:
    """The error of a line (NDJSON) or row (CSV) of a body that is not a document (400)."""
    return InvalidQuery(f"line {line}: {reason}")


def ndjson_documents(body: bytes, max_depth: int) -> list[tuple[int, dict[str, Any]]]:
    """The documents of an NDJSON body with their line numbers; blank lines are skipped.

    Raises:
        InvalidQuery: a line is not a JSON object (or breaks the bounds every body keeps).

    """
    documents = []
    for number, line in enumerate(body.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            document = decode_untrusted(line, f"line {number}")
            check_bounds(document, f"line {number}", max_depth, document=True)
        except InvalidQuery as exc:
            raise line_error(number, exc.message.removeprefix(f"line {number} ")) from None
        if not isinstance(document, dict):
            raise line_error(number, "is not a JSON object")
        documents.append((number, document))
    return documents


def csv_documents(body: bytes, max_depth: int) -> list[tuple[int, dict[str, Any]]]:
    """The documents of a CSV body (a header row, then one row each) with line numbers.

    Raises:
        InvalidQuery: the body is not UTF-8, a row has more cells than the header, or a
            header is empty or repeated.

    """
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise line_error(1, "the CSV body is not UTF-8") from None
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows, None)
    if header is None:
        return []
    if any(not name for name in header) or len(set(header)) != len(header):
        raise line_error(1, "the header row must name every column once")
    documents = []
    for row in rows:
        number = rows.line_num
        if not any(row):
            continue
        if len(row) > len(header):
            raise line_error(number, f"has {len(row)} cells; the header names {len(header)}")
        document = {name: _cell_value(cell) for name, cell in zip(header, row, strict=False)
                    if cell != ""}
        check_bounds(document, f"line {number}", max_depth, document=True)
        documents.append((number, document))
    return documents


def _cell_value(cell: str) -> Any:
    if cell[:1] in ("{", "["):
        try:
            return decode_untrusted(cell.encode(), "a cell")
        except InvalidQuery:
            return cell
    return cell


def csv_columns(documents: Iterable[dict[str, Any]], declared: Sequence[str] = ()) -> list[str]:
    """The columns of a CSV answer: ``declared`` first, then each key as first seen."""
    columns = dict.fromkeys(declared)
    for document in documents:
        columns.update(dict.fromkeys(document))
    return list(columns)


def csv_lines(documents: Iterable[dict[str, Any]], columns: Sequence[str]) -> Iterator[bytes]:
    """Each document as one CSV row (CRLF-terminated, RFC 4180 quoting)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for document in documents:
        writer.writerow([_cell_text(document.get(column)) for column in columns])
        yield buffer.getvalue().encode()
        buffer.seek(0)
        buffer.truncate()


def csv_header(columns: Sequence[str]) -> bytes:
    """The header row."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(columns)
    return buffer.getvalue().encode()


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _encode(value).decode()
