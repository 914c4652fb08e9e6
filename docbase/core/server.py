"""A :class:`Server` holds several databases, each with its own ``{base_url}``.

A request reaches a database by host name (``<db>.<domain>``) or by path prefix
(``/db/<db>``); with neither, the default database answers. Databases share nothing:
each has its own stores, keys, settings, media and mail transport.
"""

from __future__ import annotations

from collections.abc import Mapping

from docbase.core.database import Database
from docbase.core.errors import ConfigurationError, NotFound
from docbase.core.lifecycle import AsyncResource
from docbase.core.names import check_database_name


class Server(AsyncResource):
    """Several named databases and the rule that routes a request to one of them."""

    def __init__(
        self,
        databases: Mapping[str, Database],
        *,
        default: str | None = None,
        domain: str | None = None,
    ) -> None:
        if not databases:
            raise ConfigurationError("a server needs at least one database")
        self.databases = {check_database_name(name): db for name, db in databases.items()}
        self.default = default or next(iter(self.databases))
        if self.default not in self.databases:
            raise ConfigurationError(f"default database {self.default!r} is not configured")
        self.domain = domain.lower().strip(".") if domain else None

    def database(self, name: str) -> Database:
        """The database called ``name``.

        Raises:
            NotFound: no such database on this server.

        """
        try:
            return self.databases[name]
        except KeyError:
            raise NotFound(f"no database {name!r} on this server") from None

    def route(self, host: str | None, path: str) -> tuple[str, str]:
        """Pick the database for a request: return ``(name, path within its base_url)``.

        ``/db/<name>/rest/...`` selects by path prefix; otherwise a host
        ``<name>.<domain>`` selects by host name; otherwise the default database.

        Raises:
            NotFound: the prefix or host names a database this server does not hold.

        """
        if path.startswith("/db/"):
            name, _, rest = path[4:].partition("/")
            self.database(name)
            return name, "/" + rest
        if host and self.domain:
            hostname = host.rsplit(":", 1)[0].lower() if not host.startswith("[") else host
            if hostname.endswith("." + self.domain):
                name = hostname[: -len(self.domain) - 1]
                self.database(name)
                return name, path
        return self.default, path

    async def open(self) -> None:
        """Open every database."""
        for database in self.databases.values():
            await database.open()

    async def close(self) -> None:
        """Close every database."""
        for database in self.databases.values():
            await database.close()
