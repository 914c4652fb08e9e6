"""``docbase webhooks add|list|enable|remove``, in process, on SQLite storage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import docbase
from docbase import cli


def create_database(tmp_path: Path) -> None:
    async def create() -> None:
        async with await docbase.connect(f"sqlite:///{tmp_path / 'docbase.db'}"):
            pass

    asyncio.run(create())


def test_webhooks_are_added_listed_enabled_and_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    create_database(tmp_path)
    config = tmp_path / "docbase.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n[limits]\nwebhook_private_targets = true\n')
    where = ["--config", str(config)]
    assert cli.main(["webhooks", "add", "http://127.0.0.1:9/hook", "--collection", "people",
                     "--method", "post", "delete", *where]) == 0
    webhook_id, secret = capsys.readouterr().out.split()
    assert len(secret) == 64
    assert cli.main(["webhooks", "list", "--json", *where]) == 0
    [listed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (listed["id"], listed["url"], listed["collections"], listed["methods"]) == (
        webhook_id, "http://127.0.0.1:9/hook", ["people"], ["POST", "DELETE"])
    assert "secret" not in listed
    assert cli.main(["webhooks", "enable", webhook_id, *where]) == 0
    assert cli.main(["webhooks", "remove", webhook_id, *where]) == 0
    assert cli.main(["webhooks", "remove", webhook_id, *where]) == 1
    assert "no webhook" in capsys.readouterr().err


def test_a_loopback_webhook_is_refused_without_the_operators_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    create_database(tmp_path)
    where = ["--data-dir", str(tmp_path)]
    assert cli.main(["webhooks", "add", "http://127.0.0.1:9/hook", *where]) == 1
    assert "webhook_private_targets" in capsys.readouterr().err
    assert cli.main(["webhooks", "list", "--json", *where]) == 0
    assert capsys.readouterr().out == ""
