"""What one webhook delivery sends: the original's body shape, signed with HMAC-SHA256.

The body is a JSON object with the written documents (a ``post`` or ``put``) or the
deleted ids (a ``delete``) under ``"0"``, ``"1"``, ..., and ``"event"``::

    {"0": {"_id": "...", "name": "Ann", ...},
     "event": {"db": "docbase", "collection": "people", "method": "POST",
               "payload": ["<the ids written>"]}}

A write of a ``POST /batch`` adds ``"batch": "<the batch id>"`` to ``"event"``.

Headers: ``X-Docbase-Delivery`` (the change's sequence number, the same on every retry:
deliveries are at least once, a receiver drops repeats by it), ``X-Docbase-Timestamp``
(Unix seconds) and ``X-Docbase-Signature: sha256=<hex>``, the HMAC-SHA256 with the
webhook's secret of the timestamp, a dot, and the body bytes. :func:`verify_signature`
is what a receiver checks (``docs/realtime.md`` has one).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import msgspec

from docbase.core.changes.entries import Change

DELIVERY_HEADER = "x-docbase-delivery"
TIMESTAMP_HEADER = "x-docbase-timestamp"
SIGNATURE_HEADER = "x-docbase-signature"


def webhook_body(database: str, change: Change) -> bytes:
    """The JSON body delivering ``change`` of ``database``."""
    items: list[Any] = list(change.documents) if change.documents else list(change.ids)
    body: dict[str, Any] = {str(n): item for n, item in enumerate(items)}
    body["event"] = {"db": database, "collection": change.collection,
                     "method": change.method, "payload": list(change.ids)}
    if change.batch is not None:
        body["event"]["batch"] = change.batch
    return msgspec.json.encode(body)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=`` and the hex HMAC-SHA256 of ``timestamp.body`` with ``secret``."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def verify_signature(secret: str, timestamp: str, body: bytes, signed: str) -> bool:
    """Tell whether ``signed`` (the signature header) signs ``body`` at ``timestamp``."""
    return hmac.compare_digest(signature(secret, timestamp, body), signed)


def delivery_headers(secret: str, change: Change, body: bytes,
                     timestamp: int) -> tuple[tuple[str, str], ...]:
    """The headers of one delivery of ``change``."""
    stamp = str(timestamp)
    return (("content-type", "application/json"), ("user-agent", "docbase-webhooks"),
            (DELIVERY_HEADER, str(change.seq)), (TIMESTAMP_HEADER, stamp),
            (SIGNATURE_HEADER, signature(secret, stamp, body)))
