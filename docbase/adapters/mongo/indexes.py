"""Indexes on document paths: ``ensure_index`` as MongoDB ``createIndexes``.

An index is ascending on the dotted path and named ``docbase_<path>`` (plus
``_unique``). A unique index has a partial filter that leaves out documents where the
path is missing or null, because core's uniqueness does not constrain those; on an
array value MongoDB's index is multikey, so each element must then be unique (core
compares the array as a whole). Asking for a unique index where a plain one exists
replaces it; asking for a plain one where a unique one exists keeps that.

Only one-step paths use indexes for queries (see :mod:`.filters`); an index on a
dotted path still serves uniqueness. An index key is a dotted path, so a key holding
``.`` cannot be indexed: a plain index on it is skipped (no query could use it), a
unique one refused.
"""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.collection import AsyncCollection

from docbase.adapters.mongo.expressions import plain_field
from docbase.core.errors import InvalidQuery
from docbase.core.query import Path

_PRESENT_TYPES = ["double", "int", "long", "decimal", "string", "object", "array", "bool",
                  "objectId"]


async def ensure_index(
    target: AsyncCollection[dict[str, Any]], path: Path, *, unique: bool
) -> None:
    """Create the index on ``path`` unless an index serving it exists.

    Raises:
        pymongo.errors.DuplicateKeyError: ``unique`` and stored documents repeat a value.
        InvalidQuery: ``unique`` and a step of ``path`` holds ``.``.

    """
    if not all(plain_field(step) for step in path):
        if unique:
            raise InvalidQuery(f"MongoDB cannot index the key path {list(path)!r}: an index "
                               "names its field by a dotted path")
        return
    field = ".".join(path)
    for name, info in (await target.index_information()).items():
        if list(info["key"]) == [(field, 1)]:
            if info.get("unique") or not unique:
                return
            await target.drop_index(name)
    options: dict[str, Any] = {"name": f"docbase_{field}" + ("_unique" if unique else "")}
    if unique:
        options.update(unique=True, partialFilterExpression={field: {"$type": _PRESENT_TYPES}})
    await target.create_index([(field, 1)], **options)
