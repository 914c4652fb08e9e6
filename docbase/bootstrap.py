"""Bringing a deployment's databases up: building them, and their first full-access key.

:func:`open_database` and :func:`build_deployment_server` turn a resolved
:class:`~docbase.config.Deployment` into databases through the composition root
(``docbase/core/composition.py``). :func:`ensure_admin_key` is the one place a
database gets its full-access key: from ``DOCBASE_ADMIN_KEY`` for the primary, else
from its admin key file, else a new random key written there with mode 0600.
``docbase serve`` (for an in-memory database, inside the worker) and
``docbase db create`` both use it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

import msgspec

from docbase.config import PRIMARY, DatabaseEntry, Deployment, admin_key_path, write_secret
from docbase.core import auth
from docbase.core.composition import DatabaseSpec, build_database, build_server
from docbase.core.database import Database
from docbase.core.schemes import scheme_of
from docbase.core.server import Server

ADMIN_KEY_ENV = "DOCBASE_ADMIN_KEY"
"""A full-access key of the primary database, adopted at start (no ``admin.key`` then)."""


class AdminKey(msgspec.Struct, frozen=True):
    """The outcome of bootstrapping one database's full-access key."""

    database: str
    source: str
    """``"file"`` (written to ``path``), ``"env"`` (DOCBASE_ADMIN_KEY) or ``"existing"``."""
    created: bool
    path: str | None = None
    warning: str | None = None
    key: str | None = None
    """The key itself when it was made here (``source == "file"``)."""
    console_admin: bool = True
    """Whether a user may sign in to the console (an administrator exists)."""


def database_spec(deployment: Deployment, entry: DatabaseEntry, *,
                  hooks: bool = False) -> DatabaseSpec:
    """Describe one database of the deployment for the composition root.

    With ``hooks`` (a serving worker) its hooks file or module is loaded too; the
    operator commands work without it.
    """
    return DatabaseSpec(entry.name, entry.storage, deployment.limits,
                        entry.hooks if hooks else None)


def open_database(deployment: Deployment, entry: DatabaseEntry) -> Database:
    """Build (not open) one database of the deployment.

    Raises:
        UnknownSchemeError: no adapter is registered for its storage URL.
        MissingDependencyError: the adapter's driver is not installed.

    """
    return build_database(database_spec(deployment, entry))


def build_deployment_server(deployment: Deployment) -> Server:
    """Build (not open) the server of every database of the deployment, catalog included.

    Each database's hooks file or module is loaded.

    Raises:
        ConfigurationError: the catalog is unreadable, the default database unknown, or
            a hooks file cannot be loaded.
        UnknownSchemeError: a storage URL has no adapter.

    """
    return build_server(
        [database_spec(deployment, entry, hooks=True) for entry in deployment.all_databases()],
        default=deployment.default_database,
        domain=deployment.domain,
    )


async def ensure_admin_key(
    database: Database, data_dir: Path, environ: Mapping[str, str] | None = None,
    *, new: bool = False,
) -> AdminKey:
    """Give ``database`` a full-access key if it has none yet (its first start).

    For the primary database, ``DOCBASE_ADMIN_KEY`` (when set) is made a full-access key
    on every start; otherwise a database without keys gets the key found in its admin
    key file, or a new random one written there with mode 0600. With ``new`` (a database
    just created) a new key is made and replaces the file whatever there is.

    Raises:
        DocbaseError: the key cannot be stored.
        OSError: the admin key file cannot be read or written.

    """
    environ = os.environ if environ is None else environ
    given = environ.get(ADMIN_KEY_ENV) if database.name == PRIMARY and not new else None
    if given:
        key, created = await auth.ensure_key(database, given.strip(), description="admin")
        warning = None
        if key.revoked is not None:
            warning = f"the key in {ADMIN_KEY_ENV} was revoked at {key.revoked}"
        return AdminKey(database.name, "env", created, warning=warning)
    if not new and await auth.list_keys(database):
        return AdminKey(database.name, "existing", created=False)
    path = admin_key_path(data_dir, database.name)
    if new:
        path.unlink(missing_ok=True)
    raw = path.read_text().strip() if path.exists() else None
    raw, _ = await auth.create_key(database, full_access=True, raw_key=raw, description="admin")
    if not path.exists():
        write_secret(path, raw + "\n")
    return AdminKey(database.name, "file", created=True, path=str(path), key=raw)


def _choose_in_memory_key(deployment: Deployment, entry: DatabaseEntry) -> AdminKey | None:
    path = admin_key_path(deployment.data_path, entry.name)
    if entry.name == PRIMARY and os.environ.get(ADMIN_KEY_ENV):
        return AdminKey(entry.name, "env", created=True)
    if path.exists():
        return None
    write_secret(path, secrets.token_hex(20) + "\n")
    return AdminKey(entry.name, "file", created=True, path=str(path))


async def bootstrap(deployment: Deployment) -> list[AdminKey]:
    """Open every database once (creating it) and make sure each has a full-access key.

    A database in memory lives in the worker, which adopts its key at start-up with
    :func:`ensure_admin_key`: here the key is only chosen (and written to its file).

    Raises:
        ConfigurationError: the catalog is unreadable.
        DocbaseError: a database cannot be opened or its key stored.

    """
    outcomes = []
    for entry in deployment.all_databases():
        if scheme_of(entry.storage) == "memory":
            chosen = _choose_in_memory_key(deployment, entry)
            if chosen is not None:
                outcomes.append(chosen)
            continue
        async with open_database(deployment, entry) as database:
            outcome = await ensure_admin_key(database, deployment.data_path)
            outcomes.append(msgspec.structs.replace(
                outcome, console_admin=await auth.any_admin(database)))
    return outcomes
