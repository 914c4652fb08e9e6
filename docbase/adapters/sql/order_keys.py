"""Order keys: JSON values written as text whose code point order is the total order.

The total order of :mod:`docbase.core.ordering` is reproduced in SQL by comparing keys
instead of values. A key starts with the type class rank and encodes the value so that
comparing two keys character by character gives the same answer as
:func:`~docbase.core.ordering.compare`, and equal keys mean equal values (``1`` and
``1.0`` share a key; objects with the same pairs in another key order do not)::

    null    "1"
    number  "2" + 16 hex digits of the IEEE-754 double, sign-adjusted to sort as text
    string  "3" + escaped code points + END
    object  "4" + ("+" + escaped key + END + key of value)* + END
    array   "5" + (key of element)* + END
    boolean "60" | "61"

``END`` is U+0001; the escapes (U+0000, U+0001, U+0002 become two characters each,
starting with U+0002) keep every content character above ``END``, so a shorter string
or container sorts first. Every key is prefix-free, so keys can be concatenated.
PostgreSQL computes the same keys with the functions of :mod:`.postgresql.functions`; SQLite
calls :func:`encode_key` through a registered function.
"""

from __future__ import annotations

import math
import struct
from typing import Final

from docbase.core.ordering import type_class
from docbase.core.query import JSON

END: Final = "\x01"
NULL_KEY: Final = "1"
TRUE_KEY: Final = "61"
FALSE_KEY: Final = "60"
RANKS: Final = {"null": "1", "number": "2", "string": "3", "object": "4", "array": "5",
                "boolean": "6"}
_ESCAPES: Final = str.maketrans({"\x00": "\x02\x01", "\x01": "\x02\x02", "\x02": "\x02\x03"})
_SIGN: Final = 1 << 63
_ALL_BITS: Final = (1 << 64) - 1


def number_key(number: float) -> str:
    """Return 16 hex digits that sort as text exactly as the numbers sort."""
    try:
        value = float(number) + 0.0  # adding +0.0 turns -0.0 into 0.0
    except OverflowError:  # an integer beyond the double range (not promised)
        value = math.copysign(math.inf, number)
    bits: int = struct.unpack(">Q", struct.pack(">d", value))[0]
    bits = bits ^ _ALL_BITS if bits & _SIGN else bits | _SIGN
    return f"{bits:016x}"


def escape(text: str) -> str:
    """Escape U+0000..U+0002 so that every content character sorts above ``END``."""
    return text.translate(_ESCAPES)


def encode_key(value: JSON) -> str:
    """Return the order key of a JSON value (see the module docstring)."""
    match type_class(value):
        case "null":
            return NULL_KEY
        case "number":
            return "2" + number_key(value)
        case "string":
            return "3" + escape(value) + END
        case "boolean":
            return TRUE_KEY if value else FALSE_KEY
        case "object":
            pairs = "".join("+" + escape(key) + END + encode_key(item)
                            for key, item in value.items())
            return "4" + pairs + END
        case "array":
            return "5" + "".join(encode_key(item) for item in value) + END
