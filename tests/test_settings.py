"""Operator settings: one declaration, from which the file keys, options and variables come."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec
import pytest

from docbase import cli
from docbase.config import ConfigFile, ServerSettings, load_config, resolve, settings
from docbase.config.sources import environment_overrides
from docbase.core.errors import ConfigurationError

RESERVED_VARIABLES = {"DOCBASE_ADMIN_KEY", "DOCBASE_DEPLOYMENT", "DOCBASE_TEST_MONGO_URL",
                      "DOCBASE_URL"}


def _serve_actions() -> dict[str, argparse.Action]:
    """The ``docbase serve`` options, by destination (without --help and --config)."""
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve = commands.choices["serve"]
    return {action.dest: action for action in serve._actions
            if action.option_strings and action.dest not in ("help", "config")}


def _serve_options() -> dict[str, str]:
    """Map each ``docbase serve`` option's destination to its flag."""
    return {dest: action.option_strings[0] for dest, action in _serve_actions().items()}


def test_every_setting_is_described_for_operators() -> None:
    described = settings()
    assert [s.name for s in described] == list(ServerSettings.__struct_fields__)
    assert all(s.description for s in described)


def test_every_setting_is_a_config_file_key() -> None:
    assert set(ServerSettings.__struct_fields__) <= set(ConfigFile.__struct_fields__)
    assert set(ConfigFile.__struct_fields__) - set(ServerSettings.__struct_fields__) == {
        "databases"}


def test_serve_options_are_the_declared_settings() -> None:
    expected = {s.name: s.flag for s in settings() if s.flag is not None}
    assert _serve_options() == expected
    assert expected["trusted_proxies"] == "--trusted-proxy"
    assert expected["default_database"] == "--db"
    assert {s.name for s in settings() if s.flag is None} == {"limits"}


def test_environment_variables_are_the_declared_settings() -> None:
    variables = {s.name: s.env for s in settings() if s.env is not None}
    assert variables == {name: f"DOCBASE_{name.upper()}" for name in variables}
    assert set(variables) == set(ServerSettings.__struct_fields__) - {"limits"}
    assert not set(variables.values()) & RESERVED_VARIABLES


def test_option_help_is_the_declared_description() -> None:
    helps = {dest: action.help for dest, action in _serve_actions().items()}
    assert helps == {s.name: s.description for s in settings() if s.flag is not None}


def test_command_line_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    path = tmp_path / "docbase.toml"
    path.write_text("port = 9001\nworkers = 3\nhost = '0.0.0.0'\n")
    environ = {"DOCBASE_PORT": "9002", "DOCBASE_WORKERS": "4"}
    deployment = resolve(load_config(path), environ=environ, port=9003)
    assert deployment.port == 9003  # command line
    assert deployment.workers == 4  # environment
    assert deployment.host == "0.0.0.0"  # file
    assert deployment.graceful_timeout == 30.0  # default


def test_the_command_reads_environment_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DOCBASE_DATA_DIR", str(tmp_path / "from-env"))
    assert cli.main(["db", "list"]) == 0
    assert str(tmp_path / "from-env" / "docbase.db") in capsys.readouterr().out


def test_environment_values_are_typed_like_the_setting() -> None:
    overrides = environment_overrides({
        "DOCBASE_PORT": "9000", "DOCBASE_PROXY_HEADERS": "yes",
        "DOCBASE_TRUSTED_PROXIES": "10.0.0.0/8, ::1", "DOCBASE_GRACEFUL_TIMEOUT": "2.5",
        "DOCBASE_DOMAIN": "", "DOCBASE_ADMIN_KEY": "not-a-setting",
    })
    assert overrides == {"port": 9000, "proxy_headers": True,
                         "trusted_proxies": ("10.0.0.0/8", "::1"), "graceful_timeout": 2.5}


@pytest.mark.parametrize(("variable", "value"), [
    ("DOCBASE_PORT", "high"),
    ("DOCBASE_WORKERS", "1.5"),
    ("DOCBASE_PROXY_HEADERS", "maybe"),
])
def test_a_bad_environment_value_names_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        resolve(environ={variable: value})


def test_environment_values_are_validated_like_the_others() -> None:
    with pytest.raises(ConfigurationError, match="port must be between"):
        resolve(environ={"DOCBASE_PORT": "70000"})


def test_an_unknown_config_file_key_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "docbase.toml"
    path.write_text("port = 9000\nworker = 2\n")
    with pytest.raises(ConfigurationError, match="unknown key 'worker'"):
        load_config(path)


def test_the_resolved_deployment_carries_every_setting(tmp_path: Path) -> None:
    deployment = resolve(data_dir=str(tmp_path))
    encoded = msgspec.to_builtins(deployment)
    assert set(ServerSettings.__struct_fields__) <= set(encoded)
    assert deployment.storage == f"sqlite:///{tmp_path}/docbase.db"
