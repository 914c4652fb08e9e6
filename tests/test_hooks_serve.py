"""``docbase serve`` loads hooks and jobs from files; jobs run once per tick across servers."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.test_serve_harness import eventually, run_cli, serving

HOOKS_V1 = '''
from docbase import Hook

def setup(db):
    @db.hook("orders", Hook.BEFORE_POST)
    async def stamp(ctx):
        for document in ctx.documents:
            document["release"] = 1
'''

SHOP_HOOKS = '''
from docbase import Hook, Rejected

def setup(db):
    @db.hook(Hook.BEFORE_POST)
    def closed(ctx):
        raise Rejected(f"the {ctx.collection} of {ctx.db.name} are closed")
'''

TICK_JOB = '''
import os
from docbase import Hook

def setup(db):
    @db.job("* * * * * *", name="tick")  # every second (croniter: seconds last)
    async def tick(ctx):
        await ctx.db.collection("ticks").insert({"tick": ctx.tick.isoformat(),
                                                 "pid": os.getpid()})
'''


def test_serve_loads_hooks_files_named_in_the_config_and_reloads_them_on_sighup(
    tmp_path: Path,
) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "hooks.py").write_text(HOOKS_V1)
    (tmp_path / "conf" / "shop_hooks.py").write_text(SHOP_HOOKS)
    (tmp_path / "conf" / "docbase.toml").write_text(
        'hooks = "hooks.py"\n[databases.shop]\nhooks = "shop_hooks.py"\n')
    with serving(tmp_path, "--config", "conf/docbase.toml") as served:
        key = served.admin_key
        shop_key = (served.data_dir / "admin-shop.key").read_text().strip()
        created = served.request("POST", "/rest/orders", key=key, json={"item": "a"})
        assert (created.status_code, created.json()["release"]) == (201, 1)
        refused = served.request("POST", "/db/shop/rest/orders", key=shop_key, json={})
        assert (refused.status_code, refused.json()["message"]) == (
            400, "the orders of shop are closed")

        (tmp_path / "conf" / "hooks.py").write_text(HOOKS_V1.replace("= 1", "= 2"))
        served.process.send_signal(signal.SIGHUP)

        def reloaded() -> bool:
            try:
                response = served.request("POST", "/rest/probe", key=key, json={})
                answer = served.request("POST", "/rest/orders", key=key, json={"item": "b"})
            except httpx.RemoteProtocolError:
                # the worker being replaced dropped its idle keep-alive connection as the
                # request went out (unread, so nothing stored): a client sends it again
                return False
            assert response.status_code == 201, response.text
            return bool(answer.json()["release"] == 2)

        eventually(reloaded)
        assert served.request("GET", "/health").status_code == 200


def test_serve_refuses_to_start_with_a_broken_hooks_file(tmp_path: Path) -> None:
    (tmp_path / "hooks.py").write_text("def setup(db):\n    db.job('not cron')(print)\n")
    result = run_cli(tmp_path, "serve", "--hooks", "hooks.py", check=False)
    assert result.returncode != 0
    assert "hooks" in result.stderr
    assert "job schedule 'not cron'" in result.stderr


@pytest.mark.postgres
def test_a_job_runs_once_per_tick_across_two_servers_on_postgresql(
    tmp_path: Path, schema_url: str
) -> None:
    (tmp_path / "jobs.py").write_text(TICK_JOB)
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    hooks = str(tmp_path / "jobs.py")
    with serving(first_dir, "--storage", schema_url, "--hooks", hooks) as first:
        admin = first.admin_key
        with serving(second_dir, "--storage", schema_url, "--hooks", hooks,
                     "--workers", "2"):
            started = time.monotonic()
            eventually(lambda: len(first.request("GET", "/rest/ticks", key=admin).json()) >= 4)
            assert time.monotonic() - started < 15
        ticks = first.request("GET", "/rest/ticks", key=admin).json()
        log = first.request("GET", "/rest/_hooklog", key=admin,
                            params={"q": '{"kind": "job"}'}).json()
    counts = Counter(d["tick"] for d in ticks)
    assert counts.most_common(1)[0][1] == 1, counts  # no tick ran twice
    assert Counter(entry["status"] for entry in log) == {"ok": len(log)}
    logged = Counter(entry["tick"] for entry in log)
    assert logged.most_common(1)[0][1] == 1, logged
    assert len(log) >= len(ticks) - 1  # the newest run may not have logged yet
