"""``db.mail``: the outbound log and the transports, on every storage backend.

The SMTP server is real (aiosmtpd on loopback, ``tests/smtp_capture.py``); the
databases are built by the composition root, so the transport follows the stored
``mail.*`` settings as in a server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from docbase.core.composition import build_mailer, smtp_mailer
from docbase.core.database import Database
from docbase.core.errors import MailDeliveryError, ValidationFailed
from docbase.core.events import ChangeEvent, WriteEvent
from docbase.core.hooks import HookPoint
from docbase.core.mail import OUTBOUND_COLLECTION, Status
from docbase.core.mail.outbound import queued_record
from docbase.core.mail.requests import parse_mail_body
from docbase.testing.loopback import held_port
from tests.smtp_capture import SmtpServer, smtp_server

ORDER = {"to": "ann@example.com", "subject": "Your order is ready",
         "html": "<h1>Order 7</h1><p>Ready for <b>pick-up</b>.</p>",
         "company": "Acme Inc", "sendername": "Acme support"}


def database(stores: Any) -> Database:
    store, blobs = stores
    return Database(store, blobs, mailer=build_mailer(), smtp_mailer=smtp_mailer)


@pytest.fixture
def db(stores: Any) -> Database:
    return database(stores)


@pytest.fixture
def smtp() -> Any:
    with smtp_server() as server:
        yield server


async def use_smtp(db: Database, server: SmtpServer, **smtp: Any) -> None:
    await db.settings.set("mail", server.settings(**smtp))


async def records(db: Database) -> list[dict[str, Any]]:
    return await db.collection(OUTBOUND_COLLECTION).find(h={"$orderby": {"_id": 1}})


async def test_messages_arrive_with_sender_recipients_and_both_parts(
    db: Database, smtp: SmtpServer
) -> None:
    await use_smtp(db, smtp)
    [one] = await db.mail.send(ORDER)
    many = await db.mail.send([
        {"to": ["bob@example.com", "cy@example.com"], "subject": "Two", "html": "<p>2</p>",
         "text": "two, by hand"},
        {"to": "dee@example.com", "subject": "Three", "html": "<p>3</p>", "company": "Acme"},
    ])
    assert len(many) == 2
    first, second, third = smtp.received
    assert str(first.email["From"]) == '"Acme support (Acme Inc)" <noreply@example.com>'
    assert str(first.email["To"]) == "ann@example.com"
    assert str(first.email["Subject"]) == "Your order is ready"
    assert first.email.get_content_type() == "multipart/alternative"
    assert first.parts() == {"text/plain": "Order 7\n\nReady for pick-up.",
                             "text/html": ORDER["html"]}
    assert (second.rcpt_tos, str(second.email["To"])) == (
        ["bob@example.com", "cy@example.com"], "bob@example.com, cy@example.com")
    assert second.parts()["text/plain"] == "two, by hand"
    assert str(third.email["From"]) == "Acme <noreply@example.com>"
    assert first.mail_from == "noreply@example.com"
    stored = await records(db)
    assert [r["_id"] for r in stored] == [one, *many]
    assert {(r["status"], r["transport"], r["attempts"]) for r in stored} == {
        ("sent", "smtp", 1)}
    assert [r["transport_id"] for r in stored] == [
        str(m.email["Message-ID"]) for m in smtp.received]
    assert all(r["sent"] and r["error"] is None for r in stored)


async def test_server_down_leaves_failed_records_that_retry_sends(db: Database) -> None:
    with held_port() as port:
        await db.settings.set("mail", {"transport": "smtp", "from": "noreply@example.com",
                                       "smtp": {"host": "127.0.0.1", "port": port,
                                                "starttls": False, "timeout": 2}})
        with pytest.raises(MailDeliveryError) as caught:
            await db.mail.send([ORDER, {**ORDER, "subject": "Second"}])
        stored = await records(db)
        assert [r["status"] for r in stored] == ["failed", "failed"]
        assert all(str(port) in r["error"] for r in stored)
        assert [(r["email_outbound_id"], r["status"]) for r in caught.value.results] == [
            (r["_id"], "failed") for r in stored]
        with smtp_server(port=port) as server:
            outcomes = await db.mail.retry()
            assert [o.status for o in outcomes] == [Status.SENT, Status.SENT]
            assert await db.mail.retry() == []  # nothing failed is left
            assert server.capture.subjects() == ["Your order is ready", "Second"]
        # the second was never tried while the server was down: one attempt, by the retry
        assert [(r["status"], r["attempts"]) for r in await records(db)] == [("sent", 2),
                                                                              ("sent", 1)]


async def test_queued_records_are_sent_exactly_once_by_racing_processes(
    stores: Any, smtp: SmtpServer
) -> None:
    first, second = database(stores), database(stores)  # two processes, one storage
    await use_smtp(first, smtp)
    requests = parse_mail_body([{**ORDER, "subject": f"#{i}"} for i in range(6)], limit=10)
    await first.mail.log().insert_many(
        [queued_record(r, "noreply@example.com") for r in requests])
    outcomes = await asyncio.gather(first.mail.resume(), second.mail.resume())
    sent = sorted(o.email_outbound_id for both in outcomes for o in both
                  if o.status == Status.SENT)
    assert len(sent) == len(set(sent)) == 6
    assert sorted(smtp.capture.subjects()) == [f"#{i}" for i in range(6)]
    assert {r["status"] for r in await records(first)} == {"sent"}


async def test_outbox_transport_captures_without_sending(db: Database, smtp: SmtpServer) -> None:
    await db.settings.set("mail.from", "noreply@example.com")  # transport: outbox (default)
    [record_id] = await db.mail.send(ORDER)
    assert smtp.received == []
    [(transport_id, message)] = db.mailer.sent  # type: ignore[attr-defined]
    assert (message.to, message.subject) == (("ann@example.com",), "Your order is ready")
    [stored] = await records(db)
    assert (stored["_id"], stored["status"], stored["transport"], stored["transport_id"]) == (
        record_id, "sent", "outbox", transport_id)


async def test_invalid_message_writes_and_sends_nothing(db: Database, smtp: SmtpServer) -> None:
    await use_smtp(db, smtp)
    with pytest.raises(ValidationFailed):
        await db.mail.send([ORDER, {**ORDER, "to": "not-an-address"}])
    assert await records(db) == []
    assert smtp.received == []


async def test_outbound_writes_pass_the_pipeline_and_the_change_feed() -> None:
    from docbase.core.composition import DatabaseSpec, build_database

    seen: list[tuple[str, str]] = []
    events: list[ChangeEvent] = []
    async with build_database(DatabaseSpec("mail", "memory://")) as db:
        async def hook(write: WriteEvent) -> None:
            seen.append((write.method, write.collection))

        db.hooks.on(HookPoint.BEFORE_INSERT, hook, collection=OUTBOUND_COLLECTION)
        db.hooks.on(HookPoint.BEFORE_UPDATE, hook, collection=OUTBOUND_COLLECTION)
        async def subscriber(event: ChangeEvent) -> None:
            events.append(event)

        db.changes.subscribe(subscriber)
        await db.mail.send(ORDER)
    assert seen == [("POST", OUTBOUND_COLLECTION), ("PATCH", OUTBOUND_COLLECTION),
                    ("PATCH", OUTBOUND_COLLECTION)]
    assert [e.collection for e in events] == [OUTBOUND_COLLECTION] * 3
