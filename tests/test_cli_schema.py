"""``docbase schema apply|show``: the diff, idempotence, --force, and the file formats."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import docbase
from docbase import cli

TOML = """\
mode = "strict"

[collections.people]
fields = [
  { name = "name", type = "text", required = true },
  { name = "email", type = "email", unique = true },
]

[collections.orders]
fields = [{ name = "qty", type = "number", min = 1 }]
"""


@pytest.fixture
def storage(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/app.db"

    async def create() -> None:
        async with await docbase.connect(url):
            pass

    asyncio.run(create())
    return url


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def write(tmp_path: Path, name: str, content: str | dict[str, object]) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_apply_prints_the_diff_and_is_idempotent(
        tmp_path: Path, storage: str, capsys: pytest.CaptureFixture[str]) -> None:
    file = write(tmp_path, "schema.toml", TOML)
    code, out, _ = run(capsys, "schema", "apply", file, "--storage", storage)
    assert code == 0
    assert out == ["~ schema.mode: schemaless -> strict", "+ orders: 1 field(s)",
                   "+ people: 2 field(s)"]
    assert run(capsys, "schema", "apply", file, "--storage", storage)[:2] == (
        0, ["no changes"])

    code, out, _ = run(capsys, "schema", "show", "--storage", storage)
    shown = json.loads("\n".join(out))
    assert shown["mode"] == "strict"
    assert shown["collections"]["people"]["fields"][1] == {
        "name": "email", "type": "email", "unique": True}
    # what show prints, apply takes back unchanged
    again = write(tmp_path, "shown.json", shown)
    assert run(capsys, "schema", "apply", again, "--storage", storage)[:2] == (
        0, ["no changes"])


def test_destructive_changes_need_force(
        tmp_path: Path, storage: str, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "schema", "apply", write(tmp_path, "a.toml", TOML), "--storage", storage)
    changed = write(tmp_path, "b.json", {"collections": {"people": {"fields": [
        {"name": "name", "type": "textarea", "required": True},
        {"name": "age", "type": "number"}]}}})
    code, out, err = run(capsys, "schema", "apply", changed, "--storage", storage)
    assert code == 1
    assert out == ["- orders: schema removed (its documents stay)  (destructive)",
                   "~ people.name: type 'text' -> 'textarea'  (destructive)",
                   "- people.email: email  (destructive)",
                   "+ people.age: number"]
    assert "use --force" in err
    assert run(capsys, "schema", "apply", changed, "--storage", storage, "--dry-run")[0] == 0
    shown = json.loads("\n".join(run(capsys, "schema", "show", "--storage", storage)[1]))
    assert sorted(shown["collections"]) == ["orders", "people"]  # nothing changed

    assert run(capsys, "schema", "apply", changed, "--storage", storage, "--force")[0] == 0
    shown = json.loads("\n".join(run(capsys, "schema", "show", "--storage", storage)[1]))
    assert list(shown["collections"]) == ["people"]
    assert [f["name"] for f in shown["collections"]["people"]["fields"]] == ["name", "age"]
    assert run(capsys, "schema", "apply", changed, "--storage", storage)[:2] == (
        0, ["no changes"])


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "cannot read schema file"),
    ({"collections": {"p": {"fields": [{"name": "x", "type": "colour"}]}}},
     "collection 'p': fields.x"),
    ({"mode": "loose", "collections": {}}, "mode must be 'schemaless' or 'strict'"),
    ({"tables": {}}, "expected an object with 'collections'"),
])
def test_a_bad_file_is_refused_by_name(tmp_path: Path, storage: str, content: object,
                                       message: str, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    file = write(tmp_path, "bad.json", content)  # type: ignore[arg-type]
    code, _, err = run(capsys, "schema", "apply", file, "--storage", storage)
    assert code == 2
    assert message in err


def test_a_unique_field_over_duplicates_fails_and_lists_them(
        tmp_path: Path, storage: str, capsys: pytest.CaptureFixture[str]) -> None:
    async def seed() -> list[str]:
        async with await docbase.connect(storage) as db:
            docs = await db.collection("people").insert_many([{"email": "a@x.org"}] * 2)
            return [d["_id"] for d in docs]

    ids = asyncio.run(seed())
    code, _, err = run(capsys, "schema", "apply", write(tmp_path, "s.toml", TOML),
                       "--storage", storage)
    assert code == 1
    assert f'"a@x.org" in {ids[0]}, {ids[1]}' in err
    shown = json.loads("\n".join(run(capsys, "schema", "show", "--storage", storage)[1]))
    assert shown == {"mode": "schemaless", "collections": {}}  # nothing was applied
