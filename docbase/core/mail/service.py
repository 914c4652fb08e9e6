"""Sending mail: the outbound log first, then the transport the database's settings name.

:class:`MailService` is ``db.mail``. :meth:`MailService.send` checks a ``POST /mail``
body, writes every message to the outbound log as ``queued`` (through the write
pipeline), then claims, sends and marks each one (``docbase/core/mail/outbound.py``
has the states). The transport is chosen at every send from the stored settings
(``mail.transport``): ``outbox`` is the database's own :class:`~docbase.core.ports.Mailer`
(the capture-only outbox the composition root gives it), ``smtp`` one made by the SMTP
factory the composition root wires in (``docbase/core/composition.py``) from
``mail.smtp.*``. An operator's ``docbase settings set mail.transport smtp`` thus takes
effect in every running server within the settings cache's second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from docbase.core.auth import Action, authorize
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.collection import Collection
from docbase.core.documents import Document
from docbase.core.errors import (
    ConfigurationError,
    MailDeliveryError,
    MailTransportDown,
    NotFound,
    ValidationFailed,
    VersionMismatch,
)
from docbase.core.mail import outbound
from docbase.core.mail.compose import sender_address
from docbase.core.mail.outbound import OUTBOUND_COLLECTION, Status
from docbase.core.mail.requests import parse_mail_body
from docbase.core.metrics import instruments
from docbase.core.ports import Mailer
from docbase.core.query import JSON
from docbase.core.settings.stored import MailSettings, SmtpSettings

if TYPE_CHECKING:
    from docbase.core.collection_views import CollectionViews
    from docbase.core.system_data import SettingsSource

logger = logging.getLogger("docbase.mail")

SmtpMailerFactory: TypeAlias = Callable[[SmtpSettings], Mailer]
"""Makes the SMTP transport for a database's ``mail.smtp`` settings."""


class MailOutcome(msgspec.Struct, frozen=True):
    """What became of one message: its outbound record, its status, the error if any."""

    email_outbound_id: str
    status: str
    error: str | None = None


class MailService:
    """The mail of one database: sending, retrying, and resuming after a crash."""

    def __init__(self, views: CollectionViews, settings: SettingsSource, *,
                 mailer: Mailer | None = None, smtp: SmtpMailerFactory | None = None) -> None:
        """Log through ``views``, send with ``mailer`` (``outbox``) or ``smtp``."""
        self.views = views
        self.settings = settings
        self.mailer = mailer
        self.smtp = smtp
        self.limits = views.limits

    def log(self, principal: Principal = SYSTEM) -> Collection:
        """The outbound log, written on behalf of ``principal``."""
        return self.views.system_collection(OUTBOUND_COLLECTION,
                                             outbound.writer_for(principal))

    async def transport(self) -> tuple[str, str, Mailer]:
        """The sender address, transport name and mailer the stored settings choose.

        Raises:
            ConfigurationError: ``mail.from`` is not an address, or the chosen transport
                is not available (no SMTP factory, or its package is not installed).

        """
        settings: MailSettings = (await self.settings.load()).mail
        try:
            sender_address(settings.sender)
        except ValueError as exc:
            raise ConfigurationError(f"setting 'mail.from': {exc}") from None
        if settings.transport == "smtp":
            if self.smtp is None:
                raise ConfigurationError("mail.transport is 'smtp' but this database has no "
                                         "SMTP transport: build it with docbase.connect")
            return settings.sender, "smtp", self.smtp(settings.smtp)
        if self.mailer is None:
            raise ConfigurationError("this database has no mailer for the 'outbox' "
                                     "transport: build it with docbase.connect")
        return settings.sender, "outbox", self.mailer

    async def send(self, body: JSON, principal: Principal = SYSTEM) -> list[str]:
        """Send the messages of a ``POST /mail`` body; return their outbound record ids.

        Raises:
            Forbidden: ``principal`` may not ``POST /mail``.
            InvalidQuery: the body is neither a message nor an array of them.
            PayloadTooLarge: more messages than ``limits.max_mail``.
            ValidationFailed: a message is malformed (nothing is written or sent).
            ConfigurationError: the mail settings are unusable (nothing is written).
            MailDeliveryError: a message could not be sent; its record stays
                ``failed`` and ``results`` gives every message's outcome.

        """
        authorize(principal, Action("POST", "/mail"))
        requests = parse_mail_body(body, limit=self.limits.max_mail)
        sender, name, mailer = await self.transport()
        log = self.log(principal)
        records: list[Document] = []
        step = self.limits.max_bulk
        for start in range(0, len(requests), step):
            records += await log.insert_many(
                [outbound.queued_record(r, sender) for r in requests[start:start + step]])
        outcomes = await self.deliver(log, records, name, mailer)
        refused = [o for o in outcomes if o.status == Status.FAILED]
        if refused:
            raise MailDeliveryError(
                f"{len(refused)} of {len(outcomes)} message(s) could not be sent "
                f"({refused[0].error}); they are kept as failed for a retry",
                [msgspec.to_builtins(o) for o in outcomes])
        return [o.email_outbound_id for o in outcomes]

    async def retry(self, statuses: Sequence[Status] = (Status.FAILED,)) -> list[MailOutcome]:
        """Send again every record in one of ``statuses`` (oldest first).

        Raises:
            ConfigurationError: the mail settings are unusable.

        """
        sender, name, mailer = await self.transport()
        del sender  # a record keeps the sender it was queued with
        log = self.log()
        page = self.limits.max_page
        outcomes: list[MailOutcome] = []
        last = ""
        while True:
            q: dict[str, Any] = {"status": {"$in": [s.value for s in statuses]}}
            if last:
                q["_id"] = {"$gt": last}
            records = await log.find(q, {"$orderby": {"_id": 1}, "$max": page})
            if not records:
                return outcomes
            outcomes += await self.deliver(log, records, name, mailer)
            last = str(records[-1]["_id"])

    async def resume(self) -> list[MailOutcome]:
        """Send the records a stopped process left ``queued`` (at start-up).

        Raises:
            ConfigurationError: the mail settings are unusable.

        """
        outcomes = await self.retry((Status.QUEUED,))
        if outcomes:
            counts = {s: sum(o.status == s for o in outcomes) for s in Status}
            logger.info("database %s: resumed %d queued message(s): %s", self.views.name,
                        len(outcomes), ", ".join(f"{n} {s}" for s, n in counts.items() if n))
        return outcomes

    async def deliver(self, log: Collection, records: Sequence[Document], name: str,
                      mailer: Mailer) -> list[MailOutcome]:
        """Claim, send and mark each record in turn; close the mailer at the end.

        Once the transport is down, the records after it are marked ``failed`` without
        being tried.
        """
        outcomes: list[MailOutcome] = []
        down: str | None = None
        try:
            for record in records:
                outcome, unreachable = await self._deliver_one(log, record, name, mailer, down)
                if unreachable:
                    down = outcome.error
                outcomes.append(outcome)
        finally:
            await mailer.close()
        return outcomes

    async def _deliver_one(self, log: Collection, record: Document, name: str,
                           mailer: Mailer, down: str | None) -> tuple[MailOutcome, bool]:
        record_id, version = str(record["_id"]), int(record["_version"])
        try:
            if down is not None:
                await log.patch(record_id, outbound.failed(name, down),
                                expected_version=version)
                return MailOutcome(record_id, Status.FAILED.value, down), False
            claimed = await log.patch(record_id, outbound.claim(record),
                                      expected_version=version)
        except VersionMismatch:  # another process claimed it first: it sends it
            return MailOutcome(record_id, Status.SENDING.value), False
        except NotFound:
            return MailOutcome(record_id, "deleted"), False
        unreachable = False
        try:
            transport_id = await mailer.send(outbound.message_of(claimed))
        except ValidationFailed as exc:
            error = f"the record cannot be sent: {exc.message}"
        except MailTransportDown as exc:
            error, unreachable = exc.message, True
        except MailDeliveryError as exc:
            error = exc.message
        else:
            await log.patch(record_id, outbound.sent(name, transport_id))
            return MailOutcome(record_id, Status.SENT.value), False
        instruments().mail_failed()
        await log.patch(record_id, outbound.failed(name, error))
        return MailOutcome(record_id, Status.FAILED.value, error), unreachable
