"""``POST /mail`` over real HTTPS, sending through a real SMTP server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from docbase.core.composition import DatabaseSpec, build_database
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from docbase.testing.loopback import free_port
from tests.smtp_capture import SmtpServer, smtp_server

ORDER = {"to": "ann@example.com", "subject": "Your order is ready",
         "html": "<p>Ready</p>", "company": "Acme Inc", "sendername": "Acme support"}
ID = "5f0c0e0c0e0c0e0c0e0c0e0c"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with smtp_server() as server:
        yield server


@pytest.fixture
async def live(tmp_path: Path, smtp: SmtpServer) -> AsyncIterator[LiveDocbase]:
    spec = DatabaseSpec("docbase", "memory://", Limits(max_mail=3))
    async with build_database(spec) as db, live_docbase({"docbase": db}, tmp_path) as running:
        await db.settings.set("mail", smtp.settings())
        yield running


async def outbound(live: LiveDocbase) -> list[dict[str, Any]]:
    response = await live.client.get("/rest/email_outbound", headers=live.auth(),
                                     params={"h": '{"$orderby": {"_id": 1}}'})
    assert response.status_code == 200, response.text
    records: list[dict[str, Any]] = response.json()
    return records


async def test_post_mail_answers_201_with_the_outbound_record_ids(
    live: LiveDocbase, smtp: SmtpServer
) -> None:
    one = await live.client.post("/mail", json=ORDER, headers=live.auth())
    assert one.status_code == 201, one.text
    two = await live.client.post("/db/docbase/mail", headers=live.auth(), json=[
        {**ORDER, "subject": "A"}, {**ORDER, "to": ["bob@example.com"], "subject": "B"}])
    assert two.status_code == 201, two.text
    ids = [r["email_outbound_id"] for r in one.json()["result"] + two.json()["result"]]
    assert smtp.capture.subjects() == ["Your order is ready", "A", "B"]
    assert [(r["_id"], r["status"]) for r in await outbound(live)] == [
        (i, "sent") for i in ids]


async def test_invalid_addresses_answer_422_with_the_list(
    live: LiveDocbase, smtp: SmtpServer
) -> None:
    response = await live.client.post("/mail", headers=live.auth(), json=[
        ORDER, {**ORDER, "to": ["ok@example.com", "no-at-sign"]}, {**ORDER, "to": "a@b@c"}])
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["name"] == "ValidationFailed"
    assert [entry["field"] for entry in body["list"]] == ["1.to", "2.to"]
    assert "no-at-sign" in body["list"][0]["message"][0]
    assert smtp.received == []
    assert await outbound(live) == []


@pytest.mark.parametrize("field", ["subject", "sendername", "company", "to"])
@pytest.mark.parametrize("breaks", ["\r\n", "\n", "\r"])
async def test_header_injection_answers_422(
    live: LiveDocbase, smtp: SmtpServer, field: str, breaks: str
) -> None:
    injected = {**ORDER, field: f"{ORDER[field]}{breaks}Bcc: victim@example.com"}
    response = await live.client.post("/mail", json=injected, headers=live.auth())
    assert response.status_code == 422, response.text
    [entry] = response.json()["list"]
    assert entry["field"] == field
    assert "line break" in entry["message"][0]
    assert smtp.received == []


async def test_array_over_the_limit_answers_413_naming_it(
    live: LiveDocbase, smtp: SmtpServer
) -> None:
    response = await live.client.post("/mail", json=[ORDER] * 4, headers=live.auth())
    assert response.status_code == 413, response.text
    assert "at most 3 messages (limits.max_mail)" in response.json()["message"]
    assert smtp.received == []


async def test_transport_down_answers_502_with_each_message_status(live: LiveDocbase) -> None:
    await live.db.settings.set("mail.smtp.port", free_port())
    response = await live.client.post("/mail", json=[ORDER, ORDER], headers=live.auth())
    assert response.status_code == 502, response.text
    body = response.json()
    assert body["name"] == "MailDeliveryError"
    stored = await outbound(live)
    assert [(r["email_outbound_id"], r["status"]) for r in body["result"]] == [
        (r["_id"], "failed") for r in stored]
    assert all(r["error"] for r in body["result"])


async def test_the_transport_follows_the_stored_setting(
    live: LiveDocbase, smtp: SmtpServer
) -> None:
    await live.db.settings.set("mail.transport", "outbox")
    assert (await live.client.post("/mail", json=ORDER, headers=live.auth())).status_code == 201
    assert smtp.received == []
    await live.db.settings.set("mail.transport", "smtp")
    assert (await live.client.post("/mail", json=ORDER, headers=live.auth())).status_code == 201
    assert len(smtp.received) == 1
    assert [r["transport"] for r in await outbound(live)] == ["outbox", "smtp"]


async def test_a_key_is_required_and_a_scoped_key_needs_the_mail_path(
    live: LiveDocbase, smtp: SmtpServer
) -> None:
    assert (await live.client.post("/mail", json=ORDER)).status_code == 401
    rest_only = {"x-apikey": await live.key(paths=["/rest/*"])}
    refused = await live.client.post("/mail", json=ORDER, headers=rest_only)
    assert refused.status_code == 403, refused.text
    mail_only = {"x-apikey": await live.key(paths=["/mail"], methods=["POST"])}
    assert (await live.client.post("/mail", json=ORDER, headers=mail_only)).status_code == 201
    assert len(smtp.received) == 1


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/rest/email_outbound"), ("GET", f"/rest/email_outbound/{ID}"),
    ("POST", "/rest/email_outbound"), ("PATCH", f"/rest/email_outbound/{ID}"),
    ("DELETE", f"/rest/email_outbound/{ID}"), ("GET", "/rest/email_outbound/_meta"),
    ("POST", f"/rest/people/{ID}/email_outbound"),
])
async def test_outbound_log_needs_a_full_access_key(
    live: LiveDocbase, method: str, path: str
) -> None:
    scoped = {"x-apikey": await live.key(paths=["/rest/*", "/mail"])}
    response = await live.client.request(method, path, json={"status": "failed"},
                                         headers=scoped)
    assert response.status_code == 403, response.text
    assert "full-access" in response.json()["message"]
