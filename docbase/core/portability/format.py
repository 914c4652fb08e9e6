"""The archive format: one tar file, a manifest first, then NDJSON and media members.

An archive (``docs/portability.md`` documents it for readers in other languages) is a
POSIX tar file, gzip-compressed when its name ends in ``.gz``, whose members are, in
this order:

- ``manifest.json``: the :class:`Manifest` (format name, :data:`FORMAT_VERSION`, the
  source, the change-log position the archive stands for, and per collection its member,
  document count, byte size and SHA-256);
- ``collections/<name>.ndjson``: one collection, one stored document a line, system
  fields exactly as stored (``_id``, ``_created``, ``_changed``, ``_version``, the
  ``_parent_*`` fields of children); system collections first, in :data:`SYSTEM_ORDER`;
- ``media/<id>``: the original bytes of each media file whose metadata is in ``_media``.

Because the manifest comes first, a reader can check and plan while streaming.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from docbase.core.auth.keys import KEYS_COLLECTION
from docbase.core.auth.revocation import REVOKED_COLLECTION
from docbase.core.auth.users import USERS_COLLECTION
from docbase.core.media.records import MEDIA_COLLECTION
from docbase.core.relations import RELATIONS
from docbase.core.schema.stored_schemas import SCHEMAS_COLLECTION
from docbase.core.settings.store import SETTINGS_COLLECTION
from docbase.core.settings.stored import SECTIONS
from docbase.core.webhooks.stored_webhooks import WEBHOOKS_COLLECTION

FORMAT_NAME = "docbase-archive"
FORMAT_VERSION = 1
"""Raised when the layout changes incompatibly; a reader refuses versions it does not know."""

MANIFEST_MEMBER = "manifest.json"
COLLECTION_PREFIX = "collections/"
MEDIA_PREFIX = "media/"

SYSTEM_ORDER = (SETTINGS_COLLECTION, SCHEMAS_COLLECTION, RELATIONS, KEYS_COLLECTION,
                USERS_COLLECTION, REVOKED_COLLECTION, WEBHOOKS_COLLECTION, MEDIA_COLLECTION)
"""The system collections an archive carries, in the order they are restored.

Settings and schemas come first, so the user collections after them are validated by
the schemas they were stored under. Everything else that starts with ``_`` is derived
or transient (unique-value claims, rebuilt on import; the change log and its counters;
job leases, rate counters, login failures, the hook log) and is not exported.
"""

SECRET_NAMES = frozenset({"password", "secret", "private_key"})
"""Keys inside the typed sections left out of an archive unless secrets are included."""

Consistency = Literal["change-log", "as-read"]


class CollectionEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One collection member of an archive."""

    name: str
    member: str
    count: int
    bytes: int
    sha256: str
    """SHA-256 of the member's bytes, hex."""


class MediaEntry(msgspec.Struct, frozen=True, kw_only=True):
    """The media members of an archive, together."""

    count: int
    bytes: int


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """What an archive holds; its first member."""

    format: str = FORMAT_NAME
    version: int = FORMAT_VERSION
    created: str
    database: str
    position: int
    """The change-log sequence number the user collections stand at."""
    consistency: Consistency
    """``change-log``: the user collections are the store at ``position`` exactly."""
    secrets: bool
    collections: tuple[CollectionEntry, ...]
    media: MediaEntry

    @property
    def documents(self) -> int:
        """How many documents the archive holds, every collection together."""
        return sum(entry.count for entry in self.collections)


def member_of(collection: str) -> str:
    """The archive member holding ``collection``."""
    return f"{COLLECTION_PREFIX}{collection}.ndjson"


def redact_settings(stored: dict[str, object], *, top: bool = True) -> dict[str, object]:
    """The settings document ``stored`` without its secrets.

    Left out: the operator's own top-level secrets (any key outside
    :data:`~docbase.core.settings.stored.SECTIONS` not starting with ``_``) and, at any
    depth, the values whose key is in :data:`SECRET_NAMES` (the SMTP password, token
    secrets).
    """
    kept: dict[str, object] = {}
    for key, value in stored.items():
        if key in SECRET_NAMES or (top and not key.startswith("_")
                                   and key not in SECTIONS):
            continue
        kept[key] = redact_settings(value, top=False) if isinstance(value, dict) else value
    return kept
