"""docbase: a self-hosted document database REST service, usable as a library.

>>> import asyncio, docbase
>>> async def main():
...     async with await docbase.connect("memory://") as db:
...         doc = await db.collection("people").insert({"name": "Joe"})
...         return (await db.collection("people").get(doc["_id"]))["name"]
>>> asyncio.run(main())
'Joe'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use (below), so that a process running only a part
    # of docbase (the server's supervisor) does not hold the whole library in memory
    from docbase.client import RemoteDatabase
    from docbase.connecting import connect
    from docbase.core.auth.principal import Principal
    from docbase.core.changes import Change
    from docbase.core.database import Collection, Database
    from docbase.core.errors import (
        BackendError,
        ConfigurationError,
        Conflict,
        DocbaseError,
        Forbidden,
        HookFailed,
        HookTimedOut,
        InvalidId,
        InvalidImage,
        InvalidQuery,
        InvalidToken,
        MailDeliveryError,
        MissingDependencyError,
        NotFound,
        PayloadTooLarge,
        RangeNotSatisfiable,
        Rejected,
        TooManyRequests,
        TransactionsUnsupported,
        Unauthorized,
        UnknownSchemeError,
        ValidationFailed,
        VersionMismatch,
    )
    from docbase.core.events import (
        ChangeEvent,
        DeleteIds,
        DeleteWhere,
        Insert,
        Operation,
        ReadEvent,
        UpdateDocument,
        WriteEvent,
    )
    from docbase.core.hooks import (
        Hook,
        HookPoint,
        HookRegistry,
        JobContext,
        ReadContext,
        WriteContext,
    )
    from docbase.core.hooks.scheduling import JobScheduler
    from docbase.core.media import MediaFile, Upload, Uploaded
    from docbase.core.query import Query, ReadOptions, parse_filter, parse_hints, parse_list_params
    from docbase.core.schemes import open_stores, register_scheme
    from docbase.core.settings import Limits
    from docbase.core.webhooks.dispatcher import WebhookDispatcher

_LAZY = {
    "BackendError": "docbase.core.errors",
    "Change": "docbase.core.changes",
    "ChangeEvent": "docbase.core.events",
    "Collection": "docbase.core.database",
    "ConfigurationError": "docbase.core.errors",
    "Conflict": "docbase.core.errors",
    "Database": "docbase.core.database",
    "DeleteIds": "docbase.core.events",
    "DeleteWhere": "docbase.core.events",
    "DocbaseError": "docbase.core.errors",
    "Forbidden": "docbase.core.errors",
    "Hook": "docbase.core.hooks",
    "HookFailed": "docbase.core.errors",
    "HookPoint": "docbase.core.hooks",
    "HookRegistry": "docbase.core.hooks",
    "HookTimedOut": "docbase.core.errors",
    "InvalidId": "docbase.core.errors",
    "Insert": "docbase.core.events",
    "InvalidImage": "docbase.core.errors",
    "InvalidQuery": "docbase.core.errors",
    "TransactionsUnsupported": "docbase.core.errors",
    "InvalidToken": "docbase.core.errors",
    "JobContext": "docbase.core.hooks",
    "JobScheduler": "docbase.core.hooks.scheduling",
    "Limits": "docbase.core.settings",
    "MailDeliveryError": "docbase.core.errors",
    "MediaFile": "docbase.core.media",
    "MissingDependencyError": "docbase.core.errors",
    "NotFound": "docbase.core.errors",
    "Operation": "docbase.core.events",
    "PayloadTooLarge": "docbase.core.errors",
    "Principal": "docbase.core.auth.principal",
    "Query": "docbase.core.query",
    "RangeNotSatisfiable": "docbase.core.errors",
    "ReadContext": "docbase.core.hooks",
    "ReadEvent": "docbase.core.events",
    "ReadOptions": "docbase.core.query",
    "Rejected": "docbase.core.errors",
    "RemoteDatabase": "docbase.client",
    "TooManyRequests": "docbase.core.errors",
    "Unauthorized": "docbase.core.errors",
    "UnknownSchemeError": "docbase.core.errors",
    "UpdateDocument": "docbase.core.events",
    "Upload": "docbase.core.media",
    "Uploaded": "docbase.core.media",
    "ValidationFailed": "docbase.core.errors",
    "VersionMismatch": "docbase.core.errors",
    "WebhookDispatcher": "docbase.core.webhooks.dispatcher",
    "WriteContext": "docbase.core.hooks",
    "WriteEvent": "docbase.core.events",
    "connect": "docbase.connecting",
    "open_stores": "docbase.core.schemes",
    "parse_filter": "docbase.core.query",
    "parse_hints": "docbase.core.query",
    "parse_list_params": "docbase.core.query",
    "register_scheme": "docbase.core.schemes",
}


def __getattr__(name: str) -> Any:
    """Import a public name of the library on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'docbase' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BackendError",
    "Change",
    "ChangeEvent",
    "Collection",
    "ConfigurationError",
    "Conflict",
    "Database",
    "DeleteIds",
    "DeleteWhere",
    "DocbaseError",
    "Forbidden",
    "Hook",
    "HookFailed",
    "HookPoint",
    "HookRegistry",
    "HookTimedOut",
    "Insert",
    "InvalidId",
    "InvalidImage",
    "InvalidQuery",
    "InvalidToken",
    "JobContext",
    "JobScheduler",
    "Limits",
    "MailDeliveryError",
    "MediaFile",
    "MissingDependencyError",
    "NotFound",
    "Operation",
    "PayloadTooLarge",
    "Principal",
    "Query",
    "RangeNotSatisfiable",
    "ReadContext",
    "ReadEvent",
    "ReadOptions",
    "Rejected",
    "RemoteDatabase",
    "TooManyRequests",
    "TransactionsUnsupported",
    "Unauthorized",
    "UnknownSchemeError",
    "UpdateDocument",
    "Upload",
    "Uploaded",
    "ValidationFailed",
    "VersionMismatch",
    "WebhookDispatcher",
    "WriteContext",
    "WriteEvent",
    "connect",
    "open_stores",
    "parse_filter",
    "parse_hints",
    "parse_list_params",
    "register_scheme",
]
