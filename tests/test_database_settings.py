"""A database's stored settings: typed sections, free secrets, the CLI, never over HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import docbase
from docbase import cli
from docbase.core.auth.cache import SystemCache
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError
from docbase.http.testing import LiveDocbase

PEM = ("-----BEGIN PRIVATE KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8\n"
       "-----END PRIVATE KEY-----\n")


async def test_new_database_has_the_documented_defaults(stores: Any) -> None:
    async with Database(*stores) as db:
        settings = await db.settings.load()
        assert settings.mail.transport == "outbox"
        assert settings.mail.sender == "docbase@localhost"
        assert (settings.mail.smtp.host, settings.mail.smtp.port) == ("localhost", 587)
        assert settings.auth.jwt.secret is None
        assert settings.auth.login.lifetime == "1d"
        assert settings.realtime.enabled is False
        assert await db.settings.tree() == {}


async def test_typed_settings_and_free_secrets_round_trip(stores: Any) -> None:
    async with Database(*stores) as db:
        await db.settings.set("mail.transport", "smtp")
        await db.settings.set("mail.from", "shop@example.com")
        await db.settings.set("mail.smtp.port", 2525)
        await db.settings.set("auth.jwt.secret", "s3cret")
        await db.settings.set("realtime.global", True)
        await db.settings.set("google.private_key", PEM)
        settings = await db.settings.load()
        assert settings.mail.transport == "smtp"
        assert settings.mail.sender == "shop@example.com"
        assert settings.mail.smtp.port == 2525
        assert settings.mail.smtp.host == "localhost"
        assert settings.auth.jwt.secret == "s3cret"
        assert settings.realtime.enabled is True
        assert settings.lookup("google.private_key") == PEM
        assert settings.lookup("auth.jwt.secret") == "s3cret"
        with pytest.raises(KeyError):
            settings.lookup("google.public_key")
        assert await db.settings.tree() == {
            "mail": {"transport": "smtp", "from": "shop@example.com", "smtp": {"port": 2525}},
            "auth": {"jwt": {"secret": "s3cret"}},
            "realtime": {"global": True},
            "google": {"private_key": PEM},
        }


@pytest.mark.parametrize(("path", "value", "message"), [
    ("mail.smtp.hots", "x", "unknown setting 'mail.smtp.hots'"),
    ("mail.smtp.port", "twenty-five", "setting 'mail.smtp.port': Expected `int`"),
    ("mail.transport", "pigeon", "setting 'mail.transport': Invalid enum value 'pigeon'"),
    ("auth.login", 5, "setting 'auth.login': Expected `object`"),
    ("_secret", "x", "may not start with '_'"),
    ("mail..from", "x", "invalid setting path"),
    ("$where", "x", "invalid setting path"),
])
async def test_a_bad_setting_is_refused_by_path_and_changes_nothing(
    stores: Any, path: str, value: Any, message: str
) -> None:
    async with Database(*stores) as db:
        await db.settings.set("mail.smtp.port", 25)
        with pytest.raises(ConfigurationError, match=message.replace("$", r"\$")):
            await db.settings.set(path, value)
        assert await db.settings.tree() == {"mail": {"smtp": {"port": 25}}}


async def test_a_value_cannot_become_an_object_on_the_way(stores: Any) -> None:
    async with Database(*stores) as db:
        await db.settings.set("google", "plain")
        with pytest.raises(ConfigurationError, match="'google' holds a value"):
            await db.settings.set("google.private_key", PEM)


async def test_unset_removes_a_setting(stores: Any) -> None:
    async with Database(*stores) as db:
        await db.settings.set("mail.smtp.port", 2525)
        await db.settings.set("mail.smtp.host", "smtp.example.com")
        assert await db.settings.unset("mail.smtp.port") is True
        assert await db.settings.unset("mail.smtp.port") is False
        settings = await db.settings.load()
        assert (settings.mail.smtp.host, settings.mail.smtp.port) == ("smtp.example.com", 587)


async def test_another_process_sees_a_change_within_the_cache_lifetime(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    now = [0.0]
    async with await docbase.connect(url) as writer, await docbase.connect(url) as reader:
        reader.settings.cache = SystemCache(clock=lambda: now[0])
        assert (await reader.settings.load()).mail.transport == "outbox"
        await writer.settings.set("mail.transport", "smtp")
        now[0] = 0.5  # within the one-second lifetime the reader trusts what it read
        assert (await reader.settings.load()).mail.transport == "outbox"
        now[0] = 1.0
        assert (await reader.settings.load()).mail.transport == "smtp"
        await reader.settings.set("mail.transport", "outbox")  # its own change: seen at once
        assert (await reader.settings.load()).mail.transport == "outbox"


# ------------------------------------------------------------------------------ CLI


def _run(*argv: str) -> int:
    return cli.main(list(argv))


@pytest.fixture
def sqlite_storage(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"

    async def create() -> None:
        async with await docbase.connect(url) as db:
            await db.collection("people").insert({"name": "Joe"})

    asyncio.run(create())
    return url


def test_cli_sets_values_files_and_lists_with_secrets_hidden(
    sqlite_storage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--storage", sqlite_storage, "--data-dir", str(tmp_path / "d"))
    pem = tmp_path / "key.pem"
    pem.write_text(PEM)
    assert _run("settings", "set", "mail.smtp.port", "2525", *options) == 0
    assert _run("settings", "set", "mail.from", "shop@example.com", *options) == 0
    assert _run("settings", "set", "mail.smtp.password", "hunter2", *options) == 0
    assert _run("settings", "set", "mail.smtp.starttls", "false", *options) == 0
    assert _run("settings", "set-file", "google.private_key", str(pem), *options) == 0
    capsys.readouterr()
    assert _run("settings", "list", *options) == 0
    assert capsys.readouterr().out.splitlines() == [
        "google.private_key = ***",
        'mail.from = "shop@example.com"',
        "mail.smtp.password = ***",
        "mail.smtp.port = 2525",
        "mail.smtp.starttls = false",
    ]

    async def stored() -> Any:
        async with await docbase.connect(sqlite_storage) as db:
            return await db.settings.load()

    settings = asyncio.run(stored())
    assert settings.lookup("google.private_key") == PEM
    assert settings.mail.smtp.starttls is False
    assert settings.mail.smtp.password == "hunter2"


def test_cli_refuses_a_bad_setting_naming_it(
    sqlite_storage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--storage", sqlite_storage, "--data-dir", str(tmp_path / "d"))
    assert _run("settings", "set", "mail.smtp.prot", "25", *options) == 2
    assert "unknown setting 'mail.smtp.prot'" in capsys.readouterr().err
    assert _run("settings", "unset", "mail.smtp.port", *options) == 1
    assert "no setting mail.smtp.port" in capsys.readouterr().err
    assert _run("settings", "set-file", "a.b", str(tmp_path / "missing.pem"), *options) == 2
    assert "cannot read" in capsys.readouterr().err


# ------------------------------------------------------------------------------ HTTP


async def test_no_endpoint_returns_a_setting(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.jwt.secret", "very-secret-value")
    await live.db.settings.set("google.private_key", PEM)
    await live.db.collection("people").insert({"name": "Joe"})
    bodies = []
    for path in ("/rest/_meta", "/rest/people", "/rest/_settings", "/rest/_settings/_meta",
                 "/db/main/rest/_settings", "/rest/people/_meta"):
        response = await live.client.get(path, headers=live.auth())
        bodies.append(response.text)
        if "_settings" in path:
            assert response.status_code == 400, path
            assert response.json()["name"] == "InvalidQuery"
    everything = "\n".join(bodies)
    assert "very-secret-value" not in everything
    assert "BEGIN PRIVATE KEY" not in everything
    assert "_settings" not in (await live.client.get("/rest/_meta", headers=live.auth())).text
