"""The data directory: the catalog of databases, admin key files and other secrets.

The catalog (``databases.json``) lists the databases made with ``docbase db create``;
every process started on the same data directory reads it. A database's first
full-access key is written next to it, readable by its owner only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import msgspec

from docbase.config.settings import PRIMARY
from docbase.core.errors import ConfigurationError
from docbase.core.names import check_database_name

ADMIN_KEY_FILE = "admin.key"
CATALOG_FILE = "databases.json"
PID_FILE = "docbase.pid"


class DatabaseEntry(msgspec.Struct, frozen=True, omit_defaults=True):
    """A database of the deployment: its name, storage URL and hooks file or module."""

    name: str
    storage: str
    hooks: str | None = None


class _Catalog(msgspec.Struct, forbid_unknown_fields=True):
    databases: list[DatabaseEntry] = []


def sqlite_url(path: Path) -> str:
    """Return the SQLite storage URL of a file (absolute, so every process agrees on it)."""
    return "sqlite:///" + str(path.resolve())


def check_extra_name(name: str, where: str) -> None:
    """Refuse ``name`` for a database besides the primary; ``where`` starts the message.

    Raises:
        ConfigurationError: the name is invalid or is the primary's.

    """
    try:
        check_database_name(name)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc.message}") from None
    if name == PRIMARY:
        raise ConfigurationError(
            f"{where}: {PRIMARY!r} is the primary database; set its storage with the "
            "top-level 'storage' key or --storage"
        )


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


class DatabaseCatalog(Protocol):
    """Where a deployment keeps its data and which databases it has (a ``Deployment``)."""

    @property
    def data_path(self) -> Path:
        """The data directory."""

    def all_databases(self) -> list[DatabaseEntry]:
        """The databases of the configuration and of the catalog."""


def add_to_catalog(deployment: DatabaseCatalog, name: str, storage: str | None) -> DatabaseEntry:
    """Record a new database in the catalog and return it (storage defaulted).

    Raises:
        ConfigurationError: the name is invalid or already taken.

    """
    check_extra_name(name, "database name")
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
