"""Where settings come from: the TOML config file, the environment, the command line.

All three are derived from the one declaration, :class:`~docbase.config.settings.
ServerSettings`: a setting's TOML key is its field name, its environment variable is
``DOCBASE_<FIELD>`` and its command-line option is ``--field-name`` (or the spelling
its declaration gives). :func:`~docbase.config.deployment.resolve` combines them,
command line first, then environment, then file, then defaults.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from docbase.config.catalog import check_extra_name
from docbase.config.settings import (
    ConfigFile,
    DatabaseConfig,
    Setting,
    resolve_hooks,
    settings,
)
from docbase.core.errors import ConfigurationError

_T = TypeVar("_T")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


# ---------------------------------------------------------------- the config file


def load_config(path: str | Path) -> ConfigFile:
    """Read and validate a TOML config file.

    Relative paths in it (the settings declared as paths: ``data_dir``, ``certfile``,
    ``keyfile``) are relative to the file's directory.

    Raises:
        ConfigurationError: the file is missing, not TOML, or has an unknown key or a
            value of the wrong type; the message names the key.

    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read config file {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"config file {path} is not valid TOML: {exc}") from None
    databases = raw.pop("databases", {})
    config = _convert(raw, ConfigFile, path, "")
    if not isinstance(databases, dict):
        raise ConfigurationError(f"config file {path}: key 'databases' must be a table")
    entries = {
        name: _convert(value, DatabaseConfig, path, f"databases.{name}")
        for name, value in databases.items()
    }
    entries = {name: msgspec.structs.replace(entry, hooks=resolve_hooks(entry.hooks,
                                                                        path.parent))
               if entry.hooks else entry for name, entry in entries.items()}
    for name in entries:
        check_extra_name(name, f"config file {path}: databases.{name}")
    relative = {
        setting.name: str(path.parent / value)
        for setting in settings()
        if setting.path and isinstance(value := raw.get(setting.name), str)
        and not Path(value).is_absolute()
    }
    if config.hooks:
        relative["hooks"] = resolve_hooks(config.hooks, path.parent)
    return msgspec.structs.replace(config, databases=entries, **relative)


def _convert(raw: Any, kind: type[_T], path: Path, prefix: str) -> _T:
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise ConfigurationError(_name_the_key(str(exc), path, prefix)) from None
    except ConfigurationError as exc:
        raise ConfigurationError(f"config file {path}: {exc.message}") from None


def _name_the_key(message: str, path: Path, prefix: str) -> str:
    detail, _, location = message.partition(" - at `$")
    location = location.rstrip("`").lstrip(".")
    unknown = re.fullmatch(r"Object contains unknown field `(.+)`", detail)
    if unknown:
        key = ".".join(p for p in (prefix, location, unknown.group(1)) if p)
        return f"config file {path}: unknown key {key!r}"
    key = ".".join(p for p in (prefix, location) if p) or "(top level)"
    return f"config file {path}: key {key!r}: {detail}"


# ---------------------------------------------------------------- the environment


def environment_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """Read the ``DOCBASE_<FIELD>`` variables that are set (and not empty).

    Booleans are ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``; lists
    are comma-separated.

    Raises:
        ConfigurationError: a value has the wrong type; the message names the variable.

    """
    overrides: dict[str, Any] = {}
    for setting in settings():
        raw = environ.get(setting.env) if setting.env else None
        if raw is None or raw.strip() == "":
            continue
        overrides[setting.name] = _from_text(setting, raw.strip())
    return overrides


def _from_text(setting: Setting, raw: str) -> Any:
    if setting.kind is bool:
        if raw.lower() in _TRUE + _FALSE:
            return raw.lower() in _TRUE
        raise ConfigurationError(f"environment variable {setting.env}: expected one of "
                                 f"{', '.join(_TRUE + _FALSE)}, got {raw!r}")
    value: Any = tuple(p.strip() for p in raw.split(",") if p.strip()) \
        if setting.repeatable else raw
    try:
        return msgspec.convert(value, setting.kind, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigurationError(f"environment variable {setting.env}: {exc}") from None


# ---------------------------------------------------------------- the command line


class OptionContainer(Protocol):
    """An argument parser or one of its argument groups."""

    def add_argument(self, *flags: str, **options: Any) -> Any:
        """Add one option (as :meth:`argparse.ArgumentParser.add_argument`)."""


def add_options(parser: OptionContainer, names: Iterable[str], *,
                helps: Mapping[str, str] | None = None) -> None:
    """Add the command-line options of the settings ``names`` (their default is ``None``).

    Booleans are ``store_true`` flags, lists repeatable (``append``) options; the
    help is the setting's description unless ``helps`` gives another.

    Raises:
        ValueError: a name is not a setting with a command-line option.

    """
    declared = {setting.name: setting for setting in settings()}
    for name in names:
        setting = declared.get(name)
        if setting is None or setting.flag is None:
            raise ValueError(f"{name!r} is not a setting with a command-line option")
        options: dict[str, Any] = {
            "dest": name, "default": None,
            "help": (helps or {}).get(name, setting.description),
        }
        if setting.kind is bool:
            options["action"] = "store_true"
        else:
            options["metavar"] = setting.metavar
            if setting.repeatable:
                options["action"] = "append"
            elif setting.kind in (int, float):
                options["type"] = setting.kind
        parser.add_argument(setting.flag, **options)


def command_line_names() -> list[str]:
    """Name the settings that have a command-line option, in declaration order."""
    return [setting.name for setting in settings() if setting.flag is not None]


def options_from(args: argparse.Namespace) -> dict[str, Any]:
    """Collect the settings given on the command line (``None`` for those not given)."""
    given: dict[str, Any] = {}
    for name in command_line_names():
        value = getattr(args, name, None)
        given[name] = tuple(value) if isinstance(value, list) else value
    return given
