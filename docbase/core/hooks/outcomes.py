"""The hook log: a system collection of job runs and failed after-hooks.

Every run of a scheduled job and every after-hook that failed (the write it followed
stays committed) is recorded as one document of :data:`HOOK_LOG`, readable with a
full-access key (``GET /rest/_hooklog``), and logged to the ``docbase.hooks`` logger.
It is bookkeeping, not a user's write: it goes straight to the store.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import TYPE_CHECKING, Any

from docbase.core.documents import new_document
from docbase.core.errors import DocbaseError, HookFailed, HookTimedOut

if TYPE_CHECKING:
    from docbase.core.database import Database

HOOK_LOG = "_hooklog"
"""The system collection of job outcomes and after-hook failures."""

logger = logging.getLogger("docbase.hooks")


def describe(error: BaseException) -> tuple[str, str]:
    """Return ``(status, message)`` of a failed hook or job for the log."""
    if isinstance(error, HookTimedOut):
        return "timeout", error.message
    if isinstance(error, HookFailed):
        return "failed", error.message
    if isinstance(error, DocbaseError):
        return "failed", f"{type(error).__name__}: {error.message}"
    return "failed", type(error).__name__


async def record(database: Database, entry: dict[str, Any]) -> None:
    """Store one outcome in the hook log; a storage failure is only logged."""
    entry = {**entry, "host": socket.gethostname(), "pid": os.getpid()}
    try:
        await database.store.insert(HOOK_LOG, [new_document(entry, "hook")])
    except DocbaseError as exc:
        logger.error("cannot record in %s: %s (%s)", HOOK_LOG, exc.message, entry)
