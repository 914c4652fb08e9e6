"""The webhooks of a database and their delivery state, in the system collection ``_webhooks``.

One document per webhook holds its configuration (URL, collections, methods, signing
secret) and its state, so every process and the operator see the same:

- ``enabled``; ``disabled`` (when) after ``limits.webhook_max_failures`` failures in a
  row; ``docbase webhooks enable ID`` turns it back on;
- ``cursor``, the sequence number of the last change handled (delivered or not wanted);
- ``failures`` in a row, ``next_attempt`` (retries back off), ``last_status``,
  ``last_error``, ``last_attempt``, ``last_success``;
- ``lease_owner``/``lease_until``: the one process delivering it now
  (:mod:`.dispatcher`).

Every change of a webhook's document is made at its expected ``_version``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

import msgspec

from docbase.core.auth.cache import Namespace, SystemCache
from docbase.core.changes.demand import until_every_process_logs
from docbase.core.changes.entries import Change
from docbase.core.changes.log import ChangeLog
from docbase.core.documents import Document, new_document
from docbase.core.errors import InvalidQuery, WebhookDeliveryError
from docbase.core.names import check_collection_name
from docbase.core.ports import DocumentStore
from docbase.core.query import Eq, Query
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits
from docbase.core.update import SetOp, Update
from docbase.core.webhooks.targets import check_url, resolve_target

WEBHOOKS_COLLECTION = "_webhooks"
"""The system collection of webhooks."""
METHODS = ("POST", "PUT", "PATCH", "DELETE")
"""The write methods a webhook may be called for (all by default)."""
_ACTIVE: Namespace[bool] = Namespace("webhooks.active")


class Webhook(msgspec.Struct, frozen=True, kw_only=True):
    """One webhook as stored (``id`` and ``version`` are its ``_id`` and ``_version``)."""

    id: str
    version: int
    url: str
    secret: str
    collections: tuple[str, ...] = ()
    """Collections it is called for; empty: every collection."""
    methods: tuple[str, ...] = METHODS
    enabled: bool = True
    cursor: int = 0
    failures: int = 0
    next_attempt: str = ""
    last_status: int | None = None
    last_error: str | None = None
    last_attempt: str | None = None
    last_success: str | None = None
    disabled: str | None = None
    lease_owner: str | None = None
    lease_until: str = ""

    def wants(self, change: Change) -> bool:
        """Tell whether this webhook is called for ``change`` (custom events: never)."""
        return (not change.custom and change.method in self.methods
                and (not self.collections or change.collection in self.collections))


def webhook_of(document: Document) -> Webhook:
    """The webhook a stored document holds."""
    fields = {k: v for k, v in document.items() if not k.startswith("_")}
    return msgspec.convert({**fields, "id": document["_id"],
                            "version": document["_version"]}, Webhook)


def _methods(methods: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(m.upper() for m in methods)) or METHODS
    for method in chosen:
        if method not in METHODS:
            raise InvalidQuery(f"webhook method {method!r}: use POST, PUT, PATCH or DELETE")
    return chosen


class WebhookRegistry(ReadsLimits):
    """Adding, listing, changing and removing the webhooks of one database."""

    def __init__(self, store: DocumentStore, limits: LimitsInForce, cache: SystemCache,
                 log: ChangeLog) -> None:
        self.store = store
        self.limits_in_force = limits
        self.cache = cache
        self.log = log

    async def add(self, url: str, *, collections: Iterable[str] = (),
                  methods: Iterable[str] = (), secret: str | None = None) -> Webhook:
        """Add a webhook called for the changes from now on; return it (with its secret).

        It returns once every process sharing the storage logs its writes
        (``docbase/core/changes/demand.py``): no write begun after it returned is missed.

        Raises:
            InvalidQuery: a malformed URL, collection or method, a secret shorter than 16
                characters, or a URL that reaches a non-public address while the limit
                ``webhook_private_targets`` is off.

        """
        check_url(url)
        try:
            await resolve_target(url, allow_private=self.limits.webhook_private_targets)
        except WebhookDeliveryError as exc:
            raise InvalidQuery(exc.message) from None
        if secret is not None and len(secret) < 16:
            raise InvalidQuery("a webhook secret needs at least 16 characters")
        body = {
            "url": url, "secret": secret or secrets.token_hex(32),
            "collections": [check_collection_name(c) for c in dict.fromkeys(collections)],
            "methods": list(_methods(methods)), "enabled": True,
            "cursor": (await self.log.state())[0], "failures": 0,
        }
        document = new_document(body, "system")
        await self.store.insert(WEBHOOKS_COLLECTION, [document])
        self.cache.invalidate(_ACTIVE)
        await until_every_process_logs()
        return webhook_of(document)

    async def find(self, *, enabled_only: bool = False) -> list[Webhook]:
        """Every webhook (or only the enabled ones), oldest first."""
        query = Query(filter=Eq(("enabled",), True), limit=None) if enabled_only else Query(
            limit=None)
        return [webhook_of(d) for d in await self.store.find(WEBHOOKS_COLLECTION, query)]

    async def get(self, webhook_id: str) -> Webhook:
        """One webhook.

        Raises:
            NotFound: there is no webhook with this id.

        """
        return webhook_of(await self.store.get(WEBHOOKS_COLLECTION, webhook_id))

    async def any_enabled(self) -> bool:
        """Tell whether some webhook is enabled (trusted for the cache's second)."""
        return await self.cache.fetch(_ACTIVE, None, self.consuming_now)

    async def consuming_now(self) -> bool:
        """Tell whether some webhook is enabled, reading the store now (no cache)."""
        return bool(await self.store.count(WEBHOOKS_COLLECTION, Eq(("enabled",), True)))

    @property
    def cached_as(self) -> Namespace[bool]:
        """The system-cache namespace invalidated by every change of a webhook here."""
        return _ACTIVE

    async def save(self, webhook: Webhook, **changes: Any) -> Webhook:
        """Store ``changes`` to a webhook's fields, at the version it was read at.

        Raises:
            VersionMismatch: it changed meanwhile (another process, the operator).
            NotFound: it was removed.

        """
        update = Update(tuple(SetOp((name,), value) for name, value in changes.items()))
        stored = await self.store.update(WEBHOOKS_COLLECTION, webhook.id, update, stamp={},
                                         expected_version=webhook.version)
        if "enabled" in changes:
            self.cache.invalidate(_ACTIVE)
        return webhook_of(stored)

    async def enable(self, webhook_id: str) -> Webhook:
        """Turn a webhook on again, its failures forgotten (deliveries resume at its cursor).

        Raises:
            NotFound: there is no webhook with this id.

        """
        webhook = await self.get(webhook_id)
        enabled = await self.save(webhook, enabled=True, failures=0, next_attempt="",
                                  disabled=None)
        await until_every_process_logs()  # as add: every process logs before it returns
        return enabled

    async def remove(self, webhook_id: str) -> bool:
        """Remove a webhook; tell whether there was one."""
        removed = await self.store.delete(WEBHOOKS_COLLECTION, [webhook_id])
        self.cache.invalidate(_ACTIVE)
        return bool(removed)
