"""The boundary between docbase and BSON: ids, the search field, collection names.

- Outside, an ``_id`` is a 24-hex string; inside MongoDB it is a real ObjectId (so ids
  sort, index and shard like native ones).
- Every stored document carries :data:`SEARCH_FIELD`: for each top-level field, the
  distinct strings found in it at any depth, lower-cased with :meth:`str.lower`. That
  is what ``filter=text`` searches, on the server, with core's case rules (MongoDB's
  ``$toLower`` only knows ASCII). Updates keep it current (see :mod:`.updates`); it is
  never returned.
- Document keys are stored through :data:`.keys.MONGO_KEYS` (BSON keys are C strings,
  so U+0000 is escaped; a leading ``$`` is moved behind a prefix; every ordinary key is
  stored as given), and so is every field the store names in a query, sort, grouping,
  index or update.
- Collection names, and the (stored) field names used as keys of the search field, are
  stored as given except that ``%``, ``$``, ``.`` and NUL are percent-encoded: MongoDB
  forbids ``$`` and NUL, gives ``system.`` and dots a meaning, and a collection name
  without dots never collides with the GridFS collections (``<bucket>.files``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from bson import ObjectId

from docbase.adapters.mongo.keys import MONGO_KEYS, decode_mongo_key
from docbase.core.documents import SYSTEM_FIELDS, Document
from docbase.core.evaluate import lowered_strings
from docbase.core.field_name_encoding import decode_keys, encode_keys
from docbase.core.ids import is_object_id
from docbase.core.query import JSON

SEARCH_FIELD = "_docbase_search"
"""The hidden field holding each top-level field's lower-cased strings."""

_ESCAPED = {"%": "%25", "$": "%24", ".": "%2E", "\x00": "%00"}


def object_id(value: str) -> ObjectId | None:
    """Return the ObjectId a stored ``_id`` string stands for (``None``: it cannot be one)."""
    return ObjectId(value) if is_object_id(value) and value == value.lower() else None


def escape_name(name: str) -> str:
    """Percent-encode the characters MongoDB reads into a name (``%``, ``$``, ``.``, NUL)."""
    return "".join(_ESCAPED.get(char, char) for char in name)


def encode_document(document: Document) -> dict[str, Any]:
    """Encode a document for storage: ``_id`` as an ObjectId, the search field added."""
    encoded = dict(encode_keys(document, MONGO_KEYS))
    encoded["_id"] = ObjectId(document["_id"])
    search = {}
    for key, value in encoded.items():
        if key not in SYSTEM_FIELDS and (strings := lowered_strings(value)):
            search[escape_name(key)] = strings
    encoded[SEARCH_FIELD] = search
    return encoded


def decode_document(raw: Mapping[str, Any]) -> Document:
    """Decode a stored document: ``_id`` back to its hex string, the search field gone."""
    document = dict(raw)
    document["_id"] = str(raw["_id"])
    document.pop(SEARCH_FIELD, None)
    decoded: Document = decode_keys(document, MONGO_KEYS)
    return decoded


def decode_value(value: Any) -> JSON:
    """Decode a value the server computed (a group key, a minimum): ObjectIds to hex."""
    if isinstance(value, ObjectId):
        return str(value)
    if isinstance(value, list):
        return [decode_value(item) for item in value]
    if isinstance(value, dict):
        return {decode_mongo_key(key): decode_value(item) for key, item in value.items()}
    return value


def collection_name(name: str) -> str:
    """Name the MongoDB collection holding the docbase collection ``name``."""
    return escape_name(name)


def docbase_name(stored: str) -> str | None:
    """Name the docbase collection a MongoDB collection holds (``None``: not ours)."""
    if "." in stored or "$" in stored:
        return None
    return unquote(stored)
