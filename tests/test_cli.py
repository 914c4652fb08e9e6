"""The ``docbase`` command line and its configuration, in process (no server started)."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest

from docbase import cli
from docbase.config import (
    PRIMARY,
    ConfigFile,
    DatabaseEntry,
    add_to_catalog,
    load_config,
    read_catalog,
    resolve,
    sqlite_url,
)
from docbase.core.errors import ConfigurationError
from docbase.core.settings import Limits


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "docbase.toml"
    path.write_text(text)
    return path


def test_defaults_are_the_documented_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    deployment = resolve()
    assert deployment.host == "127.0.0.1"
    assert deployment.port == 8443
    assert deployment.workers == 1
    assert deployment.data_dir == str(tmp_path / "docbase-data")
    assert deployment.databases == (
        DatabaseEntry(PRIMARY, f"sqlite:///{tmp_path}/docbase-data/docbase.db"),
    )
    assert deployment.limits == Limits()
    assert not deployment.proxy_headers


def test_options_override_the_config_file(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, 'port = 9000\nhost = "0.0.0.0"\nworkers = 3\n'))
    deployment = resolve(config, port=9001, workers=None, data_dir=str(tmp_path / "d"))
    assert (deployment.port, deployment.host, deployment.workers) == (9001, "0.0.0.0", 3)
    assert deployment.data_dir == str(tmp_path / "d")


def test_config_file_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    path = _config(tmp_path / "etc", 'data_dir = "../state"\ncertfile = "tls/c.pem"\n'
                                     'keyfile = "/abs/k.pem"\n')
    deployment = resolve(load_config(path))
    assert deployment.data_dir == str(tmp_path / "state")
    assert deployment.certfile == str(tmp_path / "etc" / "tls" / "c.pem")
    assert deployment.keyfile == "/abs/k.pem"


def test_config_file_holds_every_documented_key(tmp_path: Path) -> None:
    path = _config(tmp_path, """
host = "0.0.0.0"
port = 443
data_dir = "/var/lib/docbase"
storage = "postgresql://docbase@db.internal/docbase"
certfile = "/etc/docbase/cert.pem"
keyfile = "/etc/docbase/key.pem"
workers = 4
graceful_timeout = 10
proxy_headers = true
trusted_proxies = ["10.0.0.0/8", "127.0.0.1"]
domain = "db.example.com"

[limits]
max_page = 500
max_bulk = 100
max_body_bytes = 1048576
max_query_depth = 8

[databases.shop]
storage = "postgresql://docbase@db.internal/shop"

[databases.blog]
""")
    deployment = resolve(load_config(path))
    assert deployment.limits == Limits(max_page=500, max_bulk=100, max_body_bytes=1048576,
                                       max_query_depth=8)
    assert [(d.name, d.storage) for d in deployment.databases] == [
        ("docbase", "postgresql://docbase@db.internal/docbase"),
        ("shop", "postgresql://docbase@db.internal/shop"),
        ("blog", "sqlite:////var/lib/docbase/blog.db"),
    ]
    assert deployment.domain == "db.example.com"
    assert deployment.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
    assert deployment.proxy_headers
    assert deployment.workers == 4


@pytest.mark.parametrize(("text", "named"), [
    ("prot = 1\n", "unknown key 'prot'"),
    ("[limits]\nmax_pages = 5\n", "unknown key 'limits.max_pages'"),
    ("[databases.shop]\nstorag = 'x'\n", "unknown key 'databases.shop.storag'"),
    ("port = 'high'\n", "key 'port': Expected `int`, got `str`"),
    ("[limits]\nmax_page = 0\n", "limits.max_page must be a positive integer"),
    ("trusted_proxies = [1]\n", "key 'trusted_proxies[0]'"),
    ("databases = 3\n", "key 'databases' must be a table"),
    ("[databases.Shop]\n", "databases.Shop: invalid database name"),
    ("[databases.docbase]\n", "databases.docbase: 'docbase' is the primary database"),
    ("port = \n", "is not valid TOML"),
])
def test_config_file_errors_name_the_key(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_config(_config(tmp_path, text))
    assert named in caught.value.message
    assert str(tmp_path / "docbase.toml") in caught.value.message


def test_missing_config_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read config file"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(("options", "message"), [
    ({"port": 0}, "port must be between"),
    ({"port": 70000}, "port must be between"),
    ({"workers": 0}, "workers must be at least 1"),
    ({"certfile": "c.pem"}, "certfile and keyfile go together"),
    ({"trusted_proxies": ("proxy.local",)}, "trusted_proxies: 'proxy.local'"),
    ({"domain": "not a domain"}, "domain:"),
    ({"graceful_timeout": 0}, "graceful_timeout"),
])
def test_inconsistent_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        resolve(ConfigFile(), **options)


def test_catalog_records_databases_in_order(tmp_path: Path) -> None:
    deployment = resolve(data_dir=str(tmp_path / "data"))
    add_to_catalog(deployment, "shop", None)
    add_to_catalog(deployment, "blog", "postgresql://u:secret@h/blog")
    assert read_catalog(tmp_path / "data") == [
        DatabaseEntry("shop", sqlite_url(tmp_path / "data" / "shop.db")),
        DatabaseEntry("blog", "postgresql://u:secret@h/blog"),
    ]
    assert [d.name for d in deployment.all_databases()] == ["docbase", "shop", "blog"]
    assert deployment.database("blog").storage == "postgresql://u:secret@h/blog"
    assert deployment.database(None).name == PRIMARY
    with pytest.raises(ConfigurationError, match="already exists"):
        add_to_catalog(deployment, "shop", None)
    with pytest.raises(ConfigurationError, match="no database 'nope'"):
        deployment.database("nope")
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


def test_catalog_and_config_file_may_not_both_define_a_database(tmp_path: Path) -> None:
    add_to_catalog(resolve(data_dir=str(tmp_path)), "shop", None)
    config = load_config(_config(tmp_path, f'data_dir = "{tmp_path}"\n[databases.shop]\n'))
    with pytest.raises(ConfigurationError, match="both in the config file and in"):
        resolve(config).all_databases()


def test_damaged_catalog_is_reported(tmp_path: Path) -> None:
    (tmp_path / "databases.json").write_text("{not json")
    with pytest.raises(ConfigurationError, match="is damaged"):
        read_catalog(tmp_path)


def test_storage_passwords_are_hidden_in_listings() -> None:
    assert cli.redact("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert cli.redact("sqlite:////x/y.db") == "sqlite:////x/y.db"


def test_db_list_shows_base_urls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_to_catalog(resolve(data_dir=str(tmp_path)), "shop", "postgresql://u:pw@h/shop")
    assert cli.main(["db", "list", "--data-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "STORAGE", "BASE", "URL"]
    assert lines[1].split() == ["docbase", sqlite_url(tmp_path / "docbase.db"), "/"]
    assert lines[2].split() == ["shop", "postgresql://u:***@h/shop", "/db/shop"]


def test_keys_create_refuses_full_with_scopes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["keys", "create", "--full", "--path", "/rest/a/**"]) == 2
    assert "--full cannot be combined" in capsys.readouterr().err


def test_keys_commands_refuse_memory_storage(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["keys", "list", "--storage", "memory://"]) == 2
    assert "in memory" in capsys.readouterr().err


def test_serve_refuses_an_unknown_default_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["serve", "--db", "shop", "--data-dir", str(tmp_path / "d")]) == 2
    assert "no database 'shop'" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_serve_refuses_memory_storage_with_several_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["serve", "--storage", "memory://", "--workers", "2",
                     "--data-dir", str(tmp_path)])
    assert code == 2
    assert "each worker would hold different data" in capsys.readouterr().err


def test_scoped_key_options_accept_several_values_each() -> None:
    args = cli.build_parser().parse_args([
        "keys", "create", "--path", "/rest/a/**", "/rest/b/**", "--path", "/rest/c",
        "--method", "GET", "--method", "POST", "--origin", "https://app.example.com",
    ])
    assert args.path == ["/rest/a/**", "/rest/b/**", "/rest/c"]
    assert args.method == ["GET", "POST"]
    assert args.origin == ["https://app.example.com"]


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"], ["keys", "create", "--help"],
                                  ["keys", "list", "--help"], ["keys", "revoke", "--help"],
                                  ["db", "create", "--help"], ["db", "list", "--help"]])
def test_every_command_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 0
    assert "usage: docbase" in capsys.readouterr().out


def test_serve_refuses_a_taken_port_before_creating_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = cli.main(["serve", "--port", str(port), "--data-dir", str(tmp_path / "d")])
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
