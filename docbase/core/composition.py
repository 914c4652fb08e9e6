"""The composition root: where a :class:`~docbase.core.database.Database` is assembled.

Every caller that turns a storage URL into a database (``docbase.connect``, the
``docbase`` command, the server's workers) calls :func:`build_database`; a
:class:`~docbase.core.server.Server` of several is :func:`build_server`. Adapters
are reached only through the registry's lazy ``"module:attribute"`` strings, so this
module imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from docbase.core.database import Database
from docbase.core.hooks.loading import load_hooks
from docbase.core.metrics import NO_INSTRUMENTS, instruments
from docbase.core.metrics.timed_store import timed
from docbase.core.plugins import import_target
from docbase.core.ports import Mailer
from docbase.core.schemes import open_stores, scheme_of
from docbase.core.server import Server
from docbase.core.settings.limits import Limits
from docbase.core.settings.stored import SmtpSettings

OUTBOX_MAILER = "docbase.adapters.memory:OutboxMailer"
"""The mailer of the ``outbox`` transport (``mail.transport``): capture-only."""
SMTP_MAILER = "docbase.adapters.smtp:SmtpMailer"
"""The mailer of the ``smtp`` transport, made from ``mail.smtp.*`` at each send."""
REMOTE_CONNECT = "docbase.client:connect_remote"
"""Opens a database served elsewhere (an ``https://`` URL): the remote client (httpx)."""
REMOTE_SCHEMES = ("https://", "http://")


class DatabaseSpec(msgspec.Struct, frozen=True):
    """What one database is built from: its name, storage URL, limits, hooks.

    ``hooks`` names a Python file or module whose ``setup(db)`` registers hooks and jobs
    (:mod:`docbase.core.hooks.loading`).
    """

    name: str
    storage: str
    limits: Limits = Limits()
    hooks: str | None = None


def build_mailer(target: str = OUTBOX_MAILER) -> Mailer:
    """Build the mailer named by ``"module:attribute"`` (a class taking no arguments)."""
    mailer: Mailer = import_target(target)()
    return mailer


def smtp_mailer(settings: SmtpSettings) -> Mailer:
    """Build the SMTP transport for ``settings``; its adapter is imported on first use.

    Raises:
        MissingDependencyError: ``aiosmtplib`` is not installed.

    """
    mailer: Mailer = import_target(SMTP_MAILER)(settings)
    return mailer


def build_database(spec: DatabaseSpec, **options: Any) -> Database:
    """Build (not open) the database ``spec`` describes.

    Keyword ``options`` (e.g. ``hooks``, ``mailer``, ``smtp_mailer``) go to
    :class:`~docbase.core.database.Database`.

    Raises:
        UnknownSchemeError: no adapter is registered for the storage URL's scheme.
        MissingDependencyError: the adapter's driver is not installed.
        ConfigurationError: the hooks file or module cannot be loaded.

    """
    store, blobs = open_stores(spec.storage, query_timeout=spec.limits.query_timeout,
                                auto_index=spec.limits.auto_indexing())
    if instruments() is not NO_INSTRUMENTS:  # metrics on: time every store operation
        store = timed(store, scheme_of(spec.storage), instruments())
    options.setdefault("mailer", build_mailer())
    options.setdefault("smtp_mailer", smtp_mailer)
    database = Database(store, blobs, name=spec.name, limits=spec.limits, **options)
    if spec.hooks is not None:
        load_hooks(database, spec.hooks)
    return database


def build_server(specs: Iterable[DatabaseSpec], *, default: str, domain: str | None) -> Server:
    """Build (not open) a server of the databases ``specs`` describe.

    Raises:
        UnknownSchemeError: a storage URL has no adapter.
        MissingDependencyError: an adapter's driver is not installed.
        ConfigurationError: the default database is not among them.

    """
    databases = {spec.name: build_database(spec) for spec in specs}
    return Server(databases, default=default, domain=domain)


async def connect(url: str = "memory://", **options: Any) -> Database:
    """Open a :class:`~docbase.core.database.Database` on the storage at ``url``.

    ``memory://``, ``sqlite:///path.db``, ``sqlite://`` (in memory),
    ``postgresql://user@host/db`` and ``mongodb://host/db`` are understood. Keyword
    options are passed to :class:`~docbase.core.database.Database`. Close it with
    ``await db.close()`` or use ``async with``.

    An ``https://host:8443`` URL (or ``.../db/<name>``) opens the database a docbase
    server serves, through the remote client (``docs/client.md``): a
    ``docbase.client.RemoteDatabase`` with the same calls, taking ``apikey``, ``jwt``,
    ``login=(email, password)``, ``verify``, ``timeout`` and ``retries``.
    """
    if url.startswith(REMOTE_SCHEMES):
        remote: Database = await import_target(REMOTE_CONNECT)(url, **options)
        return remote
    name = options.pop("name", "docbase")
    limits = options.pop("limits", None) or Limits()
    database = build_database(DatabaseSpec(name, url, limits), **options)
    await database.open()
    return database
