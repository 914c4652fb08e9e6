"""Every operator setting of ``docbase serve``, declared once.

:class:`ServerSettings` is the one declaration: a field's type, default and
description (``msgspec.Meta``) are all there is to know about a setting. From it are
derived the keys of the TOML config file, the ``docbase serve`` command-line options
and the ``DOCBASE_<FIELD>`` environment overrides (``docbase/config/sources.py``);
``docs/cli.md`` ("Adding a setting") shows what a new one takes.

A field's ``Meta.extra`` may say how the command line spells it (``flag``,
``metavar``), that it is a path (made absolute, relative to the config file in the
file), or that it has no command-line option at all (``cli: False``).
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Annotated, Any, Union

import msgspec

from docbase.core.settings import Limits

PRIMARY = "docbase"
"""The name of the database every deployment has; it answers requests without a prefix."""
ENV_PREFIX = "DOCBASE_"
"""Environment overrides are called ``DOCBASE_<FIELD>``, e.g. ``DOCBASE_PORT``."""
DEFAULT_DATA_DIR = "docbase-data"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8443


class ServerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The operator settings of a deployment; every one is optional."""

    host: Annotated[str, msgspec.Meta(
        description="address to listen on (default 127.0.0.1)")] = DEFAULT_HOST
    port: Annotated[int, msgspec.Meta(
        description="port to listen on (default 8443)")] = DEFAULT_PORT
    data_dir: Annotated[str, msgspec.Meta(
        description="data directory (default ./docbase-data)",
        extra={"metavar": "DIR", "path": True})] = DEFAULT_DATA_DIR
    storage: Annotated[str | None, msgspec.Meta(
        description="storage URL of the primary database (default sqlite:///DIR/docbase.db)",
        extra={"metavar": "URL"})] = None
    certfile: Annotated[str | None, msgspec.Meta(
        description="TLS certificate chain, PEM (default: self-signed DIR/cert.pem)",
        extra={"metavar": "FILE", "path": True})] = None
    keyfile: Annotated[str | None, msgspec.Meta(
        description="TLS private key, PEM",
        extra={"metavar": "FILE", "path": True})] = None
    workers: Annotated[int, msgspec.Meta(
        description="worker processes (default 1)", extra={"metavar": "N"})] = 1
    proxy_headers: Annotated[bool, msgspec.Meta(
        description="behind a TLS-terminating proxy: trust X-Forwarded-Proto from "
                    "--trusted-proxy addresses only")] = False
    trusted_proxies: Annotated[tuple[str, ...], msgspec.Meta(
        description="proxy address or network (repeatable; default 127.0.0.1, ::1)",
        extra={"flag": "--trusted-proxy", "metavar": "ADDR"})] = ("127.0.0.1", "::1")
    domain: Annotated[str | None, msgspec.Meta(
        description="route host <db>.DOMAIN to database <db>")] = None
    graceful_timeout: Annotated[float, msgspec.Meta(
        description="time in-flight requests get to finish on shutdown (default 30)",
        extra={"metavar": "SECONDS"})] = 30.0
    header_timeout: Annotated[float, msgspec.Meta(
        description="time a client gets to send its request headers before the "
                    "connection is closed (default 10)",
        extra={"metavar": "SECONDS"})] = 10.0
    default_database: Annotated[str, msgspec.Meta(
        description="database answering requests without /db/NAME or a database "
                    f"host name (default: the primary, {PRIMARY!r})",
        extra={"flag": "--db", "metavar": "NAME"})] = PRIMARY
    hooks: Annotated[str | None, msgspec.Meta(
        description="hooks and jobs of the primary database: a Python file or module "
                    "defining setup(db), loaded by every worker (docs/hooks.md)",
        extra={"metavar": "FILE|MODULE"})] = None
    log_format: Annotated[str, msgspec.Meta(
        description="how log lines are written: text, or json (one object a line; "
                    "docs/operations.md)", extra={"metavar": "text|json"})] = "text"
    metrics_token: Annotated[str | None, msgspec.Meta(
        description="GET /metrics answers a request bearing this token "
                    "(Authorization: Bearer); metrics are collected only when this or "
                    "--metrics-address is set", extra={"metavar": "TOKEN"})] = None
    metrics_addresses: Annotated[tuple[str, ...], msgspec.Meta(
        description="address or network whose requests GET /metrics answers without "
                    "the token (repeatable)",
        extra={"flag": "--metrics-address", "metavar": "ADDR"})] = ()
    backup_dir: Annotated[str | None, msgspec.Meta(
        description="directory of scheduled backups, one archive per database per run "
                    "(default: none, no scheduled backups; docs/portability.md)",
        extra={"metavar": "DIR", "path": True})] = None
    backup_schedule: Annotated[str, msgspec.Meta(
        description="when scheduled backups run, a cron expression in UTC "
                    "(default 0 3 * * *: daily at 03:00)",
        extra={"metavar": "CRON"})] = "0 3 * * *"
    backup_keep: Annotated[int, msgspec.Meta(
        description="backups kept per database; older ones are deleted (default 7)",
        extra={"metavar": "N"})] = 7
    request_log_keep: Annotated[int, msgspec.Meta(
        description="requests each database keeps in the request log of the console's "
                    "Logs page, newest first; older ones are deleted (default 100000; "
                    "0: no request log; docs/console.md)",
        extra={"metavar": "N"})] = 100_000
    limits: Annotated[Limits, msgspec.Meta(
        description="per-database limits (the [limits] table of the config file)",
        extra={"cli": False, "env": False})] = Limits()


class Setting(msgspec.Struct, frozen=True):
    """What the declaration says about one setting, read at run time."""

    name: str
    kind: Any
    """The value's type without ``None``: ``str``, ``int``, ``float``, ``bool``,
    ``tuple[str, ...]`` or a struct."""
    optional: bool
    description: str
    default: Any
    flag: str | None
    """The command-line option, e.g. ``--trusted-proxy``; ``None`` when there is none."""
    metavar: str | None
    env: str | None
    """The environment variable, e.g. ``DOCBASE_PORT``; ``None`` when there is none."""
    path: bool

    @property
    def repeatable(self) -> bool:
        """Tell whether the value is a list (an ``append`` option, a TOML array)."""
        return typing.get_origin(self.kind) is tuple


def settings() -> list[Setting]:
    """Describe every field of :class:`ServerSettings`, in declaration order.

    Raises:
        TypeError: a field lacks its ``msgspec.Meta`` description.

    """
    hints = typing.get_type_hints(ServerSettings, include_extras=True)
    defaults = ServerSettings()
    described = []
    for name in ServerSettings.__struct_fields__:
        annotated = hints[name]
        meta = next((m for m in getattr(annotated, "__metadata__", ())
                     if isinstance(m, msgspec.Meta) and m.description), None)
        if meta is None:
            raise TypeError(f"setting {name!r} has no description")
        extra: dict[str, Any] = dict(meta.extra or {})
        kind, optional = _without_none(typing.get_args(annotated)[0])
        described.append(Setting(
            name=name,
            kind=kind,
            optional=optional,
            description=meta.description or "",
            default=getattr(defaults, name),
            flag=extra.get("flag", "--" + name.replace("_", "-")) if extra.get("cli", True)
            else None,
            metavar=extra.get("metavar"),
            env=ENV_PREFIX + name.upper() if extra.get("env", True) else None,
            path=bool(extra.get("path", False)),
        ))
    return described


def _without_none(annotation: Any) -> tuple[Any, bool]:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kinds) == 1:
            return kinds[0], True
    return annotation, False


def path_settings() -> list[str]:
    """Name the settings that are file-system paths (made absolute when resolved)."""
    return [setting.name for setting in settings() if setting.path]


class DatabaseConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of ``[databases.NAME]`` in the config file."""

    storage: str | None = None
    """Storage URL; default ``sqlite:///DATA_DIR/NAME.db``."""
    hooks: str | None = None
    """Hooks and jobs: a Python file (relative to the config file) or module."""


def resolve_hooks(target: str, base: Path) -> str:
    """Make a hooks file path absolute (relative to ``base``); leave a module name alone."""
    if not (target.endswith(".py") or "/" in target):
        return target
    path = Path(target).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


class ConfigFile(ServerSettings, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The config file (``docbase serve --config FILE``): every setting, and databases."""

    databases: dict[str, DatabaseConfig] = {}
