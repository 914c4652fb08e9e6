"""Delivering webhooks from the durable change log, once across processes, with retries.

Every ``docbase serve`` worker runs a :class:`WebhookDispatcher` (``async with``). It
wakes when the change log grows (the store's signal) or every
``limits.change_poll_interval`` seconds, and serves each enabled webhook:

1. **Lease.** A webhook is delivered by one process at a time: the dispatcher writes
   itself into the webhook's ``lease_owner`` for :data:`LEASE` at the document's
   expected ``_version``; of several processes exactly one wins, the others leave it
   alone until the lease runs out (its holder died) or is theirs.
2. **In order.** From the webhook's ``cursor`` a :class:`~docbase.core.changes.reader.
   LogReader` reads the log (never stepping over a late entry). Changes the webhook is
   not called for move the cursor on; the others are POSTed one after the other, and
   the cursor moves past each only once its receiver answered 2xx. Delivery is
   therefore at least once (a crash between the answer and storing the cursor
   repeats one delivery, with the same ``X-Docbase-Delivery``).
3. **Retry.** A failure (no answer, a non-2xx status, a non-public address) stops the
   webhook at that change: the next attempt waits ``limits.webhook_retry_delay``
   seconds, doubled after each further failure up to :data:`MAX_DELAY`.
4. **Disable.** After ``limits.webhook_max_failures`` failures in a row the webhook is
   disabled (``enabled: false``, ``disabled``: when), as the original does.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from docbase.core.changes.entries import Change
from docbase.core.changes.reader import LogReader
from docbase.core.errors import (
    DocbaseError,
    InvalidQuery,
    NotFound,
    VersionMismatch,
    WebhookDeliveryError,
)
from docbase.core.ids import format_timestamp
from docbase.core.lifecycle import AsyncResource, stop_task
from docbase.core.metrics import instruments
from docbase.core.plugins import import_target
from docbase.core.ports import WebhookRequest, WebhookSender
from docbase.core.webhooks.delivery import delivery_headers, webhook_body
from docbase.core.webhooks.stored_webhooks import Webhook
from docbase.core.webhooks.targets import resolve_target

if TYPE_CHECKING:
    from docbase.core.changes import ChangeFeed
    from docbase.core.settings.limits import Limits
    from docbase.core.webhooks.stored_webhooks import WebhookRegistry

logger = logging.getLogger("docbase.webhooks")

WEBHOOK_SENDER = "docbase.adapters.webhook:HttpxWebhookSender"
"""The HTTP client that delivers webhooks (imported when a dispatcher is built)."""
LEASE = timedelta(seconds=60)
"""How long a process holds a webhook after it last touched it."""
MAX_DELAY = 300.0
"""The longest wait between two attempts of a failing webhook (seconds)."""


class WebhookHost(Protocol):
    """What delivering a database's webhooks needs of it (a ``Database`` has it)."""

    @property
    def name(self) -> str:
        """The database's name (in each delivery's body)."""

    @property
    def limits(self) -> Limits:
        """Polling, retry and failure limits."""

    @property
    def webhooks(self) -> WebhookRegistry:
        """The webhooks and their delivery state."""

    @property
    def changes(self) -> ChangeFeed:
        """The change feed, whose log is delivered."""


def build_webhook_sender(target: str = WEBHOOK_SENDER) -> WebhookSender:
    """Build the webhook transport named by ``"module:attribute"`` (no arguments).

    Raises:
        MissingDependencyError: ``httpx`` is not installed.

    """
    sender: WebhookSender = import_target(target)()
    return sender


class WebhookDispatcher(AsyncResource):
    """Delivers the webhooks of one database while open."""

    def __init__(self, database: WebhookHost, sender: WebhookSender | None = None) -> None:
        """Deliver ``database``'s webhooks through ``sender`` (default: the httpx one).

        Raises:
            MissingDependencyError: no ``sender`` is given and httpx is not installed.

        """
        self.database = database
        self.sender = sender or build_webhook_sender()
        self.owner = secrets.token_hex(8)
        """This dispatcher's name in the leases it takes."""
        self._readers: dict[str, LogReader] = {}
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Start delivering in the background."""
        self._task = asyncio.create_task(self._loop(), name="docbase webhooks")

    async def close(self) -> None:
        """Stop delivering (a delivery in flight is abandoned and repeated later)."""
        task, self._task = self._task, None
        await stop_task(task)
        await self.sender.close()

    async def _loop(self) -> None:
        interval = self.database.limits.change_poll_interval
        seen = -1
        while True:
            try:
                await self.run_once()
            except DocbaseError as exc:  # the store failed: try again at the next round
                logger.error("webhooks of %s: %s", self.database.name, exc.message)
            seen = await self.database.changes.log.wait(seen, interval)

    async def run_once(self) -> None:
        """Serve every enabled webhook once: deliver what is due.

        Raises:
            BackendError: the store failed listing the webhooks.

        """
        if not await self.database.webhooks.any_enabled():  # cached: cheap when none
            return
        webhooks = await self.database.webhooks.find(enabled_only=True)
        await asyncio.gather(*(self._serve(webhook) for webhook in webhooks))

    async def _serve(self, webhook: Webhook) -> None:
        try:
            claimed = await self._claim(webhook)
            if claimed is not None:
                await self._deliver_pending(claimed)
        except (VersionMismatch, NotFound):  # changed or removed meanwhile: next round
            self._readers.pop(webhook.id, None)
        except DocbaseError as exc:
            logger.error("webhook %s: %s", webhook.id, exc.message)
            self._readers.pop(webhook.id, None)

    async def _claim(self, webhook: Webhook) -> Webhook | None:
        now = format_timestamp(datetime.now(UTC))
        if webhook.next_attempt > now:
            return None
        if webhook.lease_owner not in (None, self.owner) and webhook.lease_until > now:
            return None
        return await self.database.webhooks.save(webhook, **self._lease())

    def _lease(self) -> dict[str, str]:
        until = format_timestamp(datetime.now(UTC) + LEASE)
        return {"lease_owner": self.owner, "lease_until": until}

    async def _deliver_pending(self, webhook: Webhook) -> None:
        reader = self._readers.get(webhook.id)
        if reader is None or reader.position != webhook.cursor:
            reader = LogReader(self.database.changes.log, webhook.cursor,
                               grace=self.database.limits.change_gap_grace)
        self._readers[webhook.id] = reader
        cursor = webhook.cursor
        for change in await reader.read():
            if webhook.wants(change):
                attempt = format_timestamp(datetime.now(UTC))
                try:
                    status = await self.deliver(webhook, change)
                except WebhookDeliveryError as exc:
                    self._readers.pop(webhook.id, None)
                    await self._failed(webhook, cursor, attempt, exc)
                    return
                webhook = await self.database.webhooks.save(
                    webhook, cursor=change.seq, failures=0, last_status=status,
                    last_error=None, last_attempt=attempt, last_success=attempt,
                    **self._lease())
            cursor = change.seq
        if cursor != webhook.cursor:
            await self.database.webhooks.save(webhook, cursor=cursor)

    async def deliver(self, webhook: Webhook, change: Change) -> int:
        """POST ``change`` to ``webhook`` once; return the receiver's 2xx status.

        Raises:
            WebhookDeliveryError: no answer, a non-2xx status, or a non-public address
                (unless the limit ``webhook_private_targets`` allows it).

        """
        limits = self.database.limits
        try:
            address = await resolve_target(webhook.url,
                                           allow_private=limits.webhook_private_targets)
        except InvalidQuery as exc:
            raise WebhookDeliveryError(exc.message) from None
        body = webhook_body(self.database.name, change)
        headers = delivery_headers(webhook.secret, change, body, int(time.time()))
        status = await self.sender.post(WebhookRequest(webhook.url, address, headers, body,
                                                       limits.webhook_timeout))
        if not 200 <= status < 300:
            raise WebhookDeliveryError(f"{webhook.url} answered {status}", status)
        return status

    async def _failed(self, webhook: Webhook, cursor: int, attempt: str,
                      error: WebhookDeliveryError) -> None:
        instruments().webhook_failed()
        limits = self.database.limits
        failures = webhook.failures + 1
        delay = min(limits.webhook_retry_delay * 2 ** (failures - 1), MAX_DELAY)
        retry = format_timestamp(datetime.now(UTC) + timedelta(seconds=delay))
        changes: dict[str, object] = {
            "cursor": cursor, "failures": failures, "last_error": error.message,
            "last_attempt": attempt, "next_attempt": retry, "last_status": error.receiver_status,
        }
        if failures >= limits.webhook_max_failures:
            changes.update(enabled=False, disabled=attempt)
            logger.warning("webhook %s (%s) disabled after %d failures in a row: %s",
                           webhook.id, webhook.url, failures, error.message)
        else:
            logger.info("webhook %s (%s) failed (%d in a row), retry in %.1f s: %s",
                        webhook.id, webhook.url, failures, delay, error.message)
        await self.database.webhooks.save(webhook, **changes)
