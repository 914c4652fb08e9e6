"""The deployment: the settings resolved from every source, and its databases.

A deployment is what ``docbase serve`` and the other operator commands act on,
resolved from (highest first) command-line options, ``DOCBASE_<FIELD>`` environment
variables, the config file, and defaults (``docbase/config/sources.py``). Its data
directory holds the SQLite files, the self-signed certificate, ``admin.key`` and the
catalog of databases made with ``docbase db create`` (``docbase/config/catalog.py``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from docbase.config.catalog import (
    CATALOG_FILE,
    DatabaseEntry,
    check_extra_name,
    read_catalog,
    sqlite_url,
)
from docbase.config.settings import (
    PRIMARY,
    ConfigFile,
    ServerSettings,
    path_settings,
    resolve_hooks,
)
from docbase.config.sources import environment_overrides
from docbase.core.errors import ConfigurationError
from docbase.core.names import check_database_name

LOG_FORMATS = ("text", "json")
"""The values of ``log_format``."""
MIN_TOKEN_LENGTH = 16
"""The shortest ``metrics_token`` accepted: it is a password."""
_DOMAIN = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}")


class Deployment(ServerSettings, frozen=True, kw_only=True):
    """Resolved settings: absolute paths, validated values, and the databases.

    ``storage`` is the primary's storage URL (defaulted). ``databases`` are the ones
    named by options and the config file, the primary first; :meth:`all_databases`
    adds the catalog's as it is on disk now.
    """

    databases: tuple[DatabaseEntry, ...] = ()

    @property
    def metrics(self) -> bool:
        """Tell whether metrics are collected: someone is allowed to read them."""
        return self.metrics_token is not None or bool(self.metrics_addresses)

    @property
    def data_path(self) -> Path:
        """The data directory as a path."""
        return Path(self.data_dir)

    def all_databases(self) -> list[DatabaseEntry]:
        """List the configured databases followed by the catalog's, the primary first.

        Raises:
            ConfigurationError: the catalog is unreadable or names a configured database.

        """
        entries = list(self.databases)
        configured = {entry.name for entry in entries}
        for entry in read_catalog(self.data_path):
            if entry.name in configured:
                raise ConfigurationError(
                    f"database {entry.name!r} is both in the config file and in "
                    f"{self.data_path / CATALOG_FILE}"
                )
            entries.append(entry)
        return entries

    def database(self, name: str | None) -> DatabaseEntry:
        """Find the database called ``name`` (the primary when ``None``).

        Raises:
            ConfigurationError: no such database in this deployment.

        """
        name = name or PRIMARY
        databases = self.all_databases()
        for entry in databases:
            if entry.name == name:
                return entry
        known = ", ".join(entry.name for entry in databases)
        raise ConfigurationError(f"no database {name!r} in this deployment (known: {known})")


def resolve(config: ConfigFile | None = None, *, environ: Mapping[str, str] | None = None,
            **options: Any) -> Deployment:
    """Combine ``config`` with ``environ``'s overrides and command-line ``options``.

    ``None`` options were not given; without ``environ`` no environment is read.

    Raises:
        ConfigurationError: a value is out of range or inconsistent; it is named.
        TypeError: an option is not a setting.

    """
    config = config or ConfigFile()
    given = {key: value for key, value in options.items() if value is not None}
    unknown = set(given) - set(ServerSettings.__struct_fields__)
    if unknown:
        raise TypeError(f"unknown options: {sorted(unknown)}")
    overrides = environment_overrides(environ or {}) | given
    config = msgspec.structs.replace(config, **overrides)
    _check(config)
    data_dir = Path(config.data_dir).expanduser().resolve()
    hooks = resolve_hooks(config.hooks, Path.cwd()) if config.hooks else None
    databases = [DatabaseEntry(PRIMARY, config.storage or sqlite_url(data_dir / "docbase.db"),
                               hooks)]
    for name, entry in config.databases.items():
        check_extra_name(name, f"databases.{name}")
        databases.append(DatabaseEntry(name, entry.storage or sqlite_url(data_dir / f"{name}.db"),
                                       entry.hooks))
    settings = {name: getattr(config, name) for name in ServerSettings.__struct_fields__}
    settings |= {name: _absolute(settings[name]) for name in path_settings()}
    settings |= {
        "storage": databases[0].storage,
        "hooks": hooks,
        "domain": config.domain.lower().strip(".") if config.domain else None,
        "default_database": check_database_name(config.default_database),
    }
    return Deployment(**settings, databases=tuple(databases))


def _check(config: ServerSettings) -> None:
    if not 0 < config.port < 65536:
        raise ConfigurationError(f"port must be between 1 and 65535, not {config.port}")
    if config.workers < 1:
        raise ConfigurationError(f"workers must be at least 1, not {config.workers}")
    if config.graceful_timeout <= 0:
        raise ConfigurationError("graceful_timeout must be a positive number of seconds")
    if (config.certfile is None) != (config.keyfile is None):
        raise ConfigurationError("certfile and keyfile go together: give both or neither")
    _check_networks("trusted_proxies", config.trusted_proxies)
    _check_networks("metrics_addresses", config.metrics_addresses)
    if config.request_log_keep < 0:
        raise ConfigurationError("request_log_keep must be 0 (no request log) or more, "
                                 f"not {config.request_log_keep}")
    if config.log_format not in LOG_FORMATS:
        raise ConfigurationError(f"log_format must be one of {', '.join(LOG_FORMATS)}, "
                                 f"not {config.log_format!r}")
    if config.metrics_token is not None and len(config.metrics_token) < MIN_TOKEN_LENGTH:
        raise ConfigurationError(
            f"metrics_token must be at least {MIN_TOKEN_LENGTH} characters")
    domain = config.domain.lower().strip(".") if config.domain else None
    if domain is not None and not _DOMAIN.fullmatch(domain):
        raise ConfigurationError(f"domain: {config.domain!r} is not a host name")


def _check_networks(name: str, addresses: tuple[str, ...]) -> None:
    for address in addresses:
        try:
            ipaddress.ip_network(address, strict=False)
        except ValueError:
            raise ConfigurationError(
                f"{name}: {address!r} is not an IP address or network") from None


def _absolute(path: str | None) -> str | None:
    return None if path is None else str(Path(path).expanduser().resolve())
