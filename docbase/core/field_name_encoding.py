"""Document keys as the engines store them: any key, NUL (U+0000) included, exactly.

PostgreSQL's ``jsonb`` holds no U+0000 at all, BSON keys are C strings, and SQLite's
JSON functions cut a key at U+0000 (``json_each``) or refuse it in a path. So the SQL
and Mongo adapters store every document key, and name every field they query, sort,
group, index or update, through :func:`encode_key`:

- U+0000 becomes U+0001 U+0001 and U+0001 (the escape character) becomes U+0001 U+0002;
- every other key is stored as it is, so documents stored by earlier versions (whose
  keys never held U+0000, and in practice never U+0001) read back unchanged.

The code words start with the escape and none is a prefix of another, so decoding is
exact for every key; and they sort as the characters they stand for (U+0000 < U+0001 <
anything else), so keys compare in the same order encoded or not (objects sort by
their keys, see :mod:`docbase.core.ordering`). A U+0001 that is not followed by U+0001
or U+0002 (stored raw by an earlier version) is left as it is.

An engine with more rules wraps this scheme in a :class:`KeyCodec` of its own and
passes it to the functions below (the Mongo adapter also moves keys away from a
leading ``$``, :mod:`docbase.adapters.mongo.keys`). The memory adapter keeps Python
dicts and needs none of this. ``docs/adapters.md`` describes the schemes for operators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import msgspec

from docbase.core.query import JSON, Path

ESCAPE = "\x01"
"""The escape character of stored keys."""
ESCAPE_IN_JSON = "\\u0001"
"""How JSON text (msgspec's, SQLite's, PostgreSQL's ``json``) spells :data:`ESCAPE`."""
_ENCODING = str.maketrans({"\x00": "\x01\x01", "\x01": "\x01\x02"})
_MARKS_IN_JSON = (b"\\u0000", b"\\u0001")
T = TypeVar("T")


def encode_key(key: str) -> str:
    """Return ``key`` as stored: unchanged unless it holds U+0000 or U+0001."""
    if "\x00" in key or ESCAPE in key:
        return key.translate(_ENCODING)
    return key


def decode_key(stored: str) -> str:
    """Return the key ``stored`` stands for (the inverse of :func:`encode_key`)."""
    if ESCAPE not in stored:
        return stored
    # left to right, "\x01\x01" only ever matches a whole code word: every escape
    # starts one, and the only code word whose second character is an escape is NUL's
    return stored.replace("\x01\x01", "\x00").replace("\x01\x02", "\x01")


class KeyCodec(NamedTuple):
    """How one engine stores keys: a reversible, order-preserving map of key strings."""

    encode: Callable[[str], str]
    decode: Callable[[str], str]
    marks: tuple[bytes, ...]
    """Byte strings of which JSON text naming a key that ``encode`` changes holds one."""


def _mapped_keys(value: JSON, mapped: Callable[[str], str]) -> JSON:
    """``value`` with ``mapped`` applied to every key at any depth (itself if none changes)."""
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            new_key, new_item = mapped(key), _mapped_keys(item, mapped)
            changed = changed or new_key is not key or new_item is not item
            result[new_key] = new_item
        return result if changed else value
    if isinstance(value, list):
        items = [_mapped_keys(item, mapped) for item in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) \
            else value
    return value


STORED_KEYS = KeyCodec(encode_key, decode_key, _MARKS_IN_JSON)
"""The scheme above: NUL and the escape character escaped, every other key as it is."""


def encode_keys(value: JSON, codec: KeyCodec = STORED_KEYS) -> JSON:
    """Encode every key of ``value`` at any depth; ``value`` itself if none changes."""
    return _mapped_keys(value, codec.encode)


def decode_keys(value: JSON, codec: KeyCodec = STORED_KEYS) -> JSON:
    """Decode every key of ``value`` at any depth; ``value`` itself if none changes."""
    return _mapped_keys(value, codec.decode)


def json_needs_encoding(text: bytes, codec: KeyCodec = STORED_KEYS) -> bool:
    """Tell whether JSON text may hold a key :func:`encode_key` changes (a cheap scan).

    A string value holding U+0001 (or a backslash before ``u0000``) also says yes;
    then :func:`encode_keys` finds nothing to change.
    """
    return any(mark in text for mark in codec.marks)


def json_needs_decoding(text: str) -> bool:
    """Tell whether stored JSON text may hold an encoded key (a cheap substring test).

    Most texts hold no backslash at all, and a one-character search is a ``memchr``,
    about nine times faster than looking for the six characters of the escape.
    """
    return "\\" in text and ESCAPE_IN_JSON in text


def encode_path(path: Path, codec: KeyCodec = STORED_KEYS) -> Path:
    """Encode each step of a field path."""
    return tuple(codec.encode(step) for step in path)


# ---------------------------------------------------------------------------- AST nodes

_PATH_FIELDS = frozenset({"path"})
_PATHS_FIELDS = frozenset({"paths", "groupby"})
_VALUE_FIELDS = frozenset({"value", "low", "high"})
_NODE_FIELDS = frozenset({"query", "operand", "filter", "projection"})
_NODES_FIELDS = frozenset({"operands", "sort", "aggregates", "ops"})


def _encoded_field(name: str, value: Any, codec: KeyCodec) -> Any:
    if name in _PATH_FIELDS:
        return encode_path(value, codec)
    if name in _PATHS_FIELDS:
        return tuple(encode_path(path, codec) for path in value)
    if name in _VALUE_FIELDS:
        return encode_keys(value, codec)
    if name == "values":
        return tuple(encode_keys(item, codec) for item in value)
    if name == "field":  # Aggregate.field: a dotted path kept as text
        return ".".join(codec.encode(step) for step in value.split("."))
    if name in _NODE_FIELDS:
        return None if value is None else _encoded_node(value, codec)
    if name in _NODES_FIELDS:
        return tuple(_encoded_node(node, codec) for node in value)
    return value


def _encoded_node(node: Any, codec: KeyCodec) -> Any:
    changes = {name: _encoded_field(name, getattr(node, name), codec)
               for name in node.__struct_fields__}
    return msgspec.structs.replace(node, **changes)


def encode_names(node: T, codec: KeyCodec = STORED_KEYS) -> T:
    """Encode every field name in a query AST node or an ``Update``.

    ``node`` is a ``Filter``, ``SortKey``, ``Projection``, ``Aggregate``, ``Query`` or
    ``Update``; its paths and the keys of objects given as values are encoded. A node
    naming no key that ``codec`` changes is returned as it is, after one JSON encoding
    to find out.
    """
    if not json_needs_encoding(msgspec.json.encode(node), codec):
        return node
    encoded: T = _encoded_node(node, codec)
    return encoded
