"""Document keys as MongoDB stores them: never starting with ``$``, order kept.

MongoDB reads a top-level ``$`` key of a replacement document as an update operator
(pymongo refuses it before sending, CongoDB answers "Unknown update operator"), and
its update operators cannot set a ``$`` field at all; only a pipeline update can,
which not every server runs. So on top of :data:`docbase.core.field_name_encoding.STORED_KEYS`
(U+0000 and U+0001 escaped) every key that starts with ``$``, at any depth, is stored
after a two-character prefix :data:`SHIFT` = ``#`` U+10FFFF:

- ``$where`` is stored as ``#`` U+10FFFF ``$where``;
- a key that itself starts with ``#`` U+10FFFF is stored with ``#`` after the prefix;
- every other key is stored as the NUL scheme stores it.

Objects compare by their keys (:mod:`docbase.core.ordering`, and MongoDB compares
embedded documents by field name too), so the stored keys keep the order of the keys
they stand for: a key starting with ``#`` sorts below ``#`` U+10FFFF (no code point is
higher), every shifted key still starts with ``#``, so below ``%``, and after the
prefix ``#`` < ``$`` keeps escaped ``#`` U+10FFFF keys below the ``$`` keys, each group
in its own order. (MongoDB compares UTF-8 bytes, whose order is the code points';
CongoDB, the JavaScript test server, compares UTF-16 units, so there a key starting
with ``#`` and a character from U+E000 to U+FFFF sorts above the ``$`` keys.)

Keys stored raw by earlier versions (a ``$where`` inserted before this scheme) read
back unchanged; the next update that replaces the document stores them shifted.
Dots in keys are not escaped: MongoDB stores them, reads use ``$getField`` (see
:func:`.expressions.member`), and updates naming such a key take the replace path.
"""

from __future__ import annotations

from docbase.core.field_name_encoding import ESCAPE, STORED_KEYS, KeyCodec, decode_key, encode_key

SHIFT = "#\U0010ffff"
"""The prefix of a stored key that stood for a ``$`` key (or for one starting with it)."""
_ESCAPED_SHIFT = SHIFT + "#"


def encode_mongo_key(key: str) -> str:
    """Return ``key`` as the Mongo adapter stores it (never starting with ``$``)."""
    stored = encode_key(key)
    if stored.startswith("$"):
        return SHIFT + stored
    if stored.startswith(SHIFT):
        return _ESCAPED_SHIFT + stored[len(SHIFT):]
    return stored


def decode_mongo_key(stored: str) -> str:
    """Return the key ``stored`` stands for (the inverse of :func:`encode_mongo_key`)."""
    if stored[:2] == SHIFT:
        if stored[2:3] == "$":
            stored = stored[len(SHIFT):]
        elif stored[2:3] == "#":
            stored = SHIFT + stored[len(_ESCAPED_SHIFT):]
    return decode_key(stored) if ESCAPE in stored else stored


MONGO_KEYS = KeyCodec(encode_mongo_key, decode_mongo_key,
                      (*STORED_KEYS.marks, b"$", SHIFT[1].encode()))
"""The Mongo adapter's key scheme, for the functions of :mod:`docbase.core.field_name_encoding`."""
