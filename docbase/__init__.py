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

from docbase.core.auth.principal import Principal
from docbase.core.changes import Change
from docbase.core.composition import connect
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
    "TooManyRequests",
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
