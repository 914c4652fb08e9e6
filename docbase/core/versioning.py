"""Optimistic versioning: the one rule every store applies to an updated document.

A stored document carries ``_version``, 0 when inserted. An update names the version
it expects (or none); the store refuses with
:class:`~docbase.core.errors.VersionMismatch` when the stored version differs, else
writes the updated document with the caller's ``stamp`` (``_changed``,
``_changedby``) and ``_version`` one higher. See ``docs/adapters.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docbase.core.documents import Document
from docbase.core.errors import VersionMismatch
from docbase.core.update import Update, apply_update


def check_version(document_id: str, current: int | None, expected: int | None) -> None:
    """Accept ``current`` when no version is expected or it is the expected one.

    Raises:
        VersionMismatch: ``expected`` is given and ``current`` differs from it.

    """
    if expected is not None and current != expected:
        raise VersionMismatch(f"document {document_id} is at version {current}, "
                              f"not {expected}")


def versioned_id(document_ids: Sequence[str], expected_version: int | None) -> str | None:
    """The one id a delete at ``expected_version`` is about (``None`` when unversioned).

    Raises:
        ValueError: ``expected_version`` is given with other than one id.

    """
    if expected_version is None:
        return None
    if len(document_ids) != 1:
        raise ValueError(f"a delete at an expected version takes one id, not {document_ids!r}")
    return document_ids[0]


def stamped(document: Document, stamp: dict[str, Any], previous_version: int) -> Document:
    """Return ``document`` with ``stamp`` applied and ``_version`` after ``previous_version``."""
    return {**document, **stamp, "_version": previous_version + 1}


def updated_document(
    document_id: str,
    current: Document,
    update: Update,
    stamp: dict[str, Any],
    expected_version: int | None,
) -> Document:
    """Check the version of ``current``, apply ``update`` and stamp the result.

    A document stored without ``_version`` counts as version 0 for the new version.

    Raises:
        VersionMismatch: ``expected_version`` is given and ``current`` is at another.
        Conflict: ``update`` cannot apply to ``current`` (see
            :func:`docbase.core.update.apply_update`).

    """
    version = current.get("_version")
    check_version(document_id, version, expected_version)
    return stamped(apply_update(current, update), stamp, version or 0)
