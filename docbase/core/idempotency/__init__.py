"""Retries that never apply twice: ``Idempotency-Key`` records (``docs/batch.md``).

:mod:`.records` keeps one record per credential and key in the system collection
:data:`~.records.IDEMPOTENCY_COLLECTION`, through the raw
:class:`~docbase.core.ports.DocumentStore`, so every process sharing the storage
honours a key another process answered.
"""

from docbase.core.idempotency.records import (
    IDEMPOTENCY_COLLECTION,
    KEEP_SECONDS,
    Claim,
    StoredAnswer,
    check_key,
    claim,
    fingerprint,
    forget,
    remember,
)

__all__ = ["IDEMPOTENCY_COLLECTION", "KEEP_SECONDS", "Claim", "StoredAnswer", "check_key",
           "claim", "fingerprint", "forget", "remember"]
