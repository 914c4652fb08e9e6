"""Unique fields, held on every engine by the one uniqueness every store keeps: ``_id``.

Not every engine enforces a unique secondary index on each write (the Mongo wire test
server only checks one when it is built), so a unique value is *claimed*: before a
document holding value ``v`` in unique field ``f`` of collection ``c`` is stored, a
claim document whose ``_id`` is derived from ``(c, f, v)`` is inserted into
:data:`CLAIMS_COLLECTION`. Two writers racing for one value race for one ``_id``, and
every store refuses the second insert (``Conflict``, answered ``409``), in every
process sharing the storage.

- A write claims first, stores, and releases the claims of values it gave up (an
  update, a delete); a failed store releases the claims it took.
- A claim names its owner document. A claim whose owner no longer holds the value (a
  process died between its two steps) is *stale*; it is taken over, by a
  compare-and-set on the claim's ``_version``, once it is older than
  :data:`CLAIM_GRACE_SECONDS`, so a write in flight is never mistaken for a dead one.
- Null and missing values are not constrained; numbers claim by value (``1`` and
  ``1.0`` are one value).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from docbase.core.documents import Document
from docbase.core.errors import Conflict, NotFound, VersionMismatch
from docbase.core.evaluate import json_equal
from docbase.core.ids import format_timestamp, utc_now
from docbase.core.ports import DocumentStore
from docbase.core.query import And, Eq, In, Query
from docbase.core.update import SetOp, Update

CLAIMS_COLLECTION = "_unique"
"""The system collection of claims on unique values."""
CLAIM_GRACE_SECONDS = 30.0
"""How old a claim whose owner lacks its value must be before another writer takes it."""
_encode = msgspec.json.Encoder().encode


def canonical(value: Any) -> Any:
    """``value`` with whole floats as integers, so equal numbers claim alike."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def claim_id(collection: str, field: str, value: Any) -> str:
    """The ``_id`` of the claim on ``value`` in ``collection``'s unique ``field``."""
    key = b"\0".join((collection.encode(), field.encode(), _encode(canonical(value))))
    return hashlib.sha1(key).hexdigest()[:24]


def claims_of(collection: str, fields: Iterable[str], document: Document) -> list[Document]:
    """The claims a document needs: one per unique field holding a value."""
    return [
        {"_id": claim_id(collection, field, document[field]), "collection": collection,
         "field": field, "value": canonical(document[field]), "owner": document["_id"],
         "claimed": utc_now(), "_version": 0}
        for field in fields if document.get(field) is not None
    ]


def duplicate(collection: str, field: str, value: Any) -> Conflict:
    """The error of a value another document of the collection holds."""
    return Conflict(f"duplicate value for unique field {field!r} in {collection!r}: "
                    f"{_encode(value).decode()}")


class UniqueClaims:
    """Claims on unique values, in :data:`CLAIMS_COLLECTION` of one store."""

    def __init__(self, store: DocumentStore, *, grace: float = CLAIM_GRACE_SECONDS) -> None:
        self.store = store
        self.grace = grace

    async def claim(self, claims: Sequence[Document]) -> None:
        """Take every claim, or none.

        Raises:
            Conflict: another document holds one of the values (or is being written
                with it right now).

        """
        seen: dict[str, Document] = {}
        for claim in claims:
            if claim["_id"] in seen:
                raise duplicate(claim["collection"], claim["field"], claim["value"])
            seen[claim["_id"]] = claim
        if not claims:
            return
        try:
            await self.store.insert(CLAIMS_COLLECTION, list(claims))
            return
        except Conflict:
            pass
        taken: list[Document] = []
        try:
            for claim in claims:  # one by one, to learn which value is taken
                await self._claim_one(claim)
                taken.append(claim)
        except BaseException:
            await self.release(taken)
            raise

    async def _claim_one(self, claim: Document) -> None:
        for _ in range(3):
            try:
                await self.store.insert(CLAIMS_COLLECTION, [claim])
                return
            except Conflict:
                pass
            try:
                held = await self.store.get(CLAIMS_COLLECTION, claim["_id"])
            except NotFound:
                continue  # released meanwhile: try again
            if held["owner"] == claim["owner"]:
                return
            if not await self._stale(held):
                raise duplicate(claim["collection"], claim["field"], claim["value"])
            try:
                await self.store.update(
                    CLAIMS_COLLECTION, claim["_id"],
                    Update((SetOp(("owner",), claim["owner"]),
                            SetOp(("claimed",), claim["claimed"]))),
                    stamp={}, expected_version=held["_version"])
                return
            except (VersionMismatch, NotFound):
                continue
        raise duplicate(claim["collection"], claim["field"], claim["value"])

    async def _stale(self, held: Document) -> bool:
        """Whether a claim's owner no longer holds its value and the claim is old."""
        try:
            owner = await self.store.get(held["collection"], held["owner"])
            if json_equal(canonical(owner.get(held["field"])), held["value"]):
                return False
        except NotFound:
            pass
        limit = datetime.now(UTC) - timedelta(seconds=self.grace)
        return str(held.get("claimed", "")) <= format_timestamp(limit)

    async def release(self, claims: Sequence[Document]) -> None:
        """Give up claims, each only while its owner is still the one named in it."""
        if not claims:
            return
        await self.store.delete_where(CLAIMS_COLLECTION, And((
            In(("_id",), tuple(c["_id"] for c in claims)),
            In(("owner",), tuple({c["owner"] for c in claims})),
        )))

    async def release_field(self, collection: str, field: str) -> None:
        """Drop every claim of a field that is no longer unique."""
        await self.store.delete_where(CLAIMS_COLLECTION, And((
            Eq(("collection",), collection), Eq(("field",), field))))

    async def _holders(self, collection: str, field: str) -> dict[str, list[Document]]:
        """The stored documents holding a value in ``field``, by the claim of that value."""
        by_value: dict[str, list[Document]] = {}
        for document in await self.store.find(collection, Query(limit=None)):
            if document.get(field) is not None:
                key = claim_id(collection, field, document[field])
                by_value.setdefault(key, []).append(document)
        return by_value

    async def check_unique(self, collection: str, field: str) -> dict[str, list[Document]]:
        """Check that no two stored documents hold one value in ``field``; return holders.

        Raises:
            Conflict: stored documents repeat a value; the message lists the ids of each
                group of them.

        """
        by_value = await self._holders(collection, field)
        repeated = [group for group in by_value.values() if len(group) > 1]
        if repeated:
            listed = "; ".join(
                f"{_encode(canonical(group[0][field])).decode()} in "
                f"{', '.join(d['_id'] for d in group)}" for group in repeated)
            raise Conflict(f"field {field!r} of {collection!r} cannot become unique: stored "
                           f"documents repeat values: {listed}")
        return by_value

    async def claim_existing(self, collection: str, field: str) -> None:
        """Claim the values the stored documents hold in a field becoming unique.

        Raises:
            Conflict: stored documents repeat a value (see :meth:`check_unique`);
                nothing is claimed then.

        """
        by_value = await self.check_unique(collection, field)
        held = {c["_id"] for c in await self.store.find(CLAIMS_COLLECTION, Query(
            filter=And((Eq(("collection",), collection), Eq(("field",), field))),
            limit=None))}
        missing = [claim for group in by_value.values()
                   for claim in claims_of(collection, [field], group[0])
                   if claim["_id"] not in held]
        await self.claim(missing)
