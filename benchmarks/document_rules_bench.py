"""What the document rules and the stored-key checks cost per write (a script, not a test).

Times, on a typical 10-field document, the walk of
:func:`docbase.core.untrusted_json.check_bounds` that the write pipeline's content
stage runs (:mod:`docbase.core.pipeline.content`), the substring scans the SQL adapter
makes on each stored and each read body (:mod:`docbase.core.field_name_encoding`), the one
``encode_names`` of a filter, and msgspec's encoding of the same document for scale.

    .venv/bin/python benchmarks/document_rules_bench.py [--number N]
"""

from __future__ import annotations

import argparse
import timeit

import msgspec

from docbase.core.field_name_encoding import encode_names, json_needs_decoding, json_needs_encoding
from docbase.core.query import And, Eq, Gt
from docbase.core.untrusted_json import check_bounds

DOCUMENT = {"_id": "5f0000000000000000000000", "name": "Joe Smith", "age": 42,
            "email": "joe@example.com", "tags": ["a", "b", "c"],
            "address": {"city": "Oslo", "zip": "0150"}, "score": 12.5, "active": True,
            "notes": None, "_version": 0}


def main() -> None:
    """Print microseconds per call of each step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000)
    number = parser.parse_args().number
    encoded = msgspec.json.encode(DOCUMENT)
    text = encoded.decode()
    condition = And((Eq(("name",), "Joe"), Gt(("age",), 3)))
    steps = {
        "check_bounds(document=True), the content stage's walk": lambda: check_bounds(
            DOCUMENT, "the document", 64, document=True),
        "json_needs_encoding, per stored body": lambda: json_needs_encoding(encoded),
        "json_needs_decoding, per read body": lambda: json_needs_decoding(text),
        "encode_names of a two-condition filter": lambda: encode_names(condition),
        "msgspec.json.encode of the document (scale)": lambda: msgspec.json.encode(DOCUMENT),
    }
    for name, step in steps.items():
        seconds = min(timeit.repeat(step, number=number, repeat=3))
        print(f"{seconds / number * 1e6:8.3f} us  {name}")


if __name__ == "__main__":
    main()
