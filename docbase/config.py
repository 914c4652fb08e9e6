"""Operator configuration: the TOML config file, the database catalog, the deployment.

A deployment is what ``docbase serve`` and the other operator commands act on, resolved
from (highest first) command-line options, the config file, and defaults. Its data
directory holds the SQLite files, the self-signed certificate, ``admin.key`` and the
catalog of databases made with ``docbase db create``, which every process started on
the same data directory reads.

Every name here is validated when read: an unknown key in the config file is a
:class:`~docbase.core.errors.ConfigurationError` that names it.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from docbase.core.errors import ConfigurationError
from docbase.core.names import check_database_name
from docbase.core.settings import Limits

PRIMARY = "docbase"
"""The name of the database every deployment has; it answers requests without a prefix."""
DEFAULT_DATA_DIR = "docbase-data"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8443
ADMIN_KEY_FILE = "admin.key"
CATALOG_FILE = "databases.json"
PID_FILE = "docbase.pid"

_T = TypeVar("_T")
_PATH_KEYS = ("data_dir", "certfile", "keyfile")
_DOMAIN = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}")


class DatabaseConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of ``[databases.NAME]`` in the config file."""

    storage: str | None = None
    """Storage URL; default ``sqlite:///DATA_DIR/NAME.db``."""


class Config(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The config file (``docbase serve --config FILE``); every key is optional."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    data_dir: str = DEFAULT_DATA_DIR
    storage: str | None = None
    """Storage URL of the primary database; default ``sqlite:///DATA_DIR/docbase.db``."""
    certfile: str | None = None
    keyfile: str | None = None
    workers: int = 1
    graceful_timeout: float = 30.0
    """Seconds in-flight requests get to finish after SIGTERM/SIGINT."""
    proxy_headers: bool = False
    trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")
    """Addresses or networks whose ``X-Forwarded-Proto: https`` is believed."""
    domain: str | None = None
    """Routes host ``<db>.<domain>`` to database ``<db>``."""
    default_database: str = PRIMARY
    """The database answering requests with neither ``/db/<name>`` nor a database host."""
    limits: Limits = Limits()
    databases: dict[str, DatabaseConfig] = {}


class DatabaseEntry(msgspec.Struct, frozen=True):
    """A database of the deployment: its name and storage URL."""

    name: str
    storage: str


class Deployment(msgspec.Struct, frozen=True, kw_only=True):
    """A resolved configuration: absolute paths, validated values.

    ``databases`` are the ones named by options and the config file, the primary
    first; :meth:`all_databases` adds the catalog's as it is on disk now.
    """

    data_dir: str
    host: str
    port: int
    certfile: str | None
    keyfile: str | None
    workers: int
    graceful_timeout: float
    proxy_headers: bool
    trusted_proxies: tuple[str, ...]
    domain: str | None
    default_database: str
    limits: Limits
    databases: tuple[DatabaseEntry, ...]

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


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config file.

    Relative paths in it (``data_dir``, ``certfile``, ``keyfile``) are relative to the
    file's directory.

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
    config = _convert(raw, Config, path, "")
    if not isinstance(databases, dict):
        raise ConfigurationError(f"config file {path}: key 'databases' must be a table")
    entries = {
        name: _convert(value, DatabaseConfig, path, f"databases.{name}")
        for name, value in databases.items()
    }
    for name in entries:
        _check_extra_name(name, f"config file {path}: databases.{name}")
    relative = {
        key: str(path.parent / value)
        for key in _PATH_KEYS
        if isinstance(value := raw.get(key), str) and not Path(value).is_absolute()
    }
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


def _check_extra_name(name: str, where: str) -> None:
    try:
        check_database_name(name)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc.message}") from None
    if name == PRIMARY:
        raise ConfigurationError(
            f"{where}: {PRIMARY!r} is the primary database; set its storage with the "
            "top-level 'storage' key or --storage"
        )


def sqlite_url(path: Path) -> str:
    """Return the SQLite storage URL of a file (absolute, so every process agrees on it)."""
    return "sqlite:///" + str(path.resolve())


def resolve(config: Config | None = None, **options: Any) -> Deployment:
    """Combine ``config`` with command-line ``options`` (``None`` means not given).

    Raises:
        ConfigurationError: a value is out of range or inconsistent; it is named.

    """
    config = config or Config()
    given = {key: value for key, value in options.items() if value is not None}
    unknown = set(given) - set(Config.__struct_fields__)
    if unknown:
        raise TypeError(f"unknown options: {sorted(unknown)}")
    config = msgspec.structs.replace(config, **given)
    data_dir = Path(config.data_dir).expanduser().resolve()
    if not 0 < config.port < 65536:
        raise ConfigurationError(f"port must be between 1 and 65535, not {config.port}")
    if config.workers < 1:
        raise ConfigurationError(f"workers must be at least 1, not {config.workers}")
    if config.graceful_timeout <= 0:
        raise ConfigurationError("graceful_timeout must be a positive number of seconds")
    if (config.certfile is None) != (config.keyfile is None):
        raise ConfigurationError("certfile and keyfile go together: give both or neither")
    for address in config.trusted_proxies:
        try:
            ipaddress.ip_network(address, strict=False)
        except ValueError:
            raise ConfigurationError(
                f"trusted_proxies: {address!r} is not an IP address or network"
            ) from None
    domain = config.domain.lower().strip(".") if config.domain else None
    if domain is not None and not _DOMAIN.fullmatch(domain):
        raise ConfigurationError(f"domain: {config.domain!r} is not a host name")
    databases = [DatabaseEntry(PRIMARY, config.storage or sqlite_url(data_dir / "docbase.db"))]
    for name, entry in config.databases.items():
        _check_extra_name(name, f"databases.{name}")
        databases.append(DatabaseEntry(name, entry.storage or sqlite_url(data_dir / f"{name}.db")))
    return Deployment(
        data_dir=str(data_dir),
        host=config.host,
        port=config.port,
        certfile=_absolute(config.certfile),
        keyfile=_absolute(config.keyfile),
        workers=config.workers,
        graceful_timeout=config.graceful_timeout,
        proxy_headers=config.proxy_headers,
        trusted_proxies=config.trusted_proxies,
        domain=domain,
        default_database=check_database_name(config.default_database),
        limits=config.limits,
        databases=tuple(databases),
    )


def _absolute(path: str | None) -> str | None:
    return None if path is None else str(Path(path).expanduser().resolve())


# ---------------------------------------------------------------- the catalog


class _Catalog(msgspec.Struct, forbid_unknown_fields=True):
    databases: list[DatabaseEntry] = []


def read_catalog(data_dir: Path) -> list[DatabaseEntry]:
    """List the databases made with ``docbase db create`` in ``data_dir`` (none if no catalog).

    Raises:
        ConfigurationError: the catalog file exists but cannot be read.

    """
    path = data_dir / CATALOG_FILE
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return msgspec.json.decode(content, type=_Catalog).databases
    except msgspec.DecodeError as exc:
        raise ConfigurationError(f"{path} is damaged: {exc}") from None


def add_to_catalog(deployment: Deployment, name: str, storage: str | None) -> DatabaseEntry:
    """Record a new database in the catalog and return it (storage defaulted).

    Raises:
        ConfigurationError: the name is invalid or already taken.

    """
    _check_extra_name(name, "database name")
    data_dir = deployment.data_path
    with _locked(data_dir):
        taken = {entry.name for entry in deployment.all_databases()}
        if name in taken:
            raise ConfigurationError(f"database {name!r} already exists")
        entry = DatabaseEntry(name, storage or sqlite_url(data_dir / f"{name}.db"))
        catalog = _Catalog([*read_catalog(data_dir), entry])
        temporary = data_dir / f".{CATALOG_FILE}.{os.getpid()}"
        temporary.write_bytes(msgspec.json.format(msgspec.json.encode(catalog)) + b"\n")
        os.replace(temporary, data_dir / CATALOG_FILE)
    return entry


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    ensure_data_dir(data_dir)
    with open(data_dir / ".databases.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def admin_key_path(data_dir: Path, database: str) -> Path:
    """Return where the first full-access key of ``database`` is written."""
    return data_dir / (ADMIN_KEY_FILE if database == PRIMARY else f"admin-{database}.key")


def write_secret(path: Path, content: str) -> None:
    """Write a new file readable by its owner only (mode 0600); never overwrite one."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(content)


def ensure_data_dir(data_dir: Path) -> None:
    """Create the data directory (mode 0700) if it does not exist.

    Raises:
        ConfigurationError: it cannot be created.

    """
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create data directory {data_dir}: {exc}") from None
