"""The typed settings a database keeps in its storage (the "global settings").

They are one nested JSON object. The sections below (``mail``, ``auth``, ``realtime``,
``schema``, ``media``, ``limits``, ``backups``) are typed: a value of the wrong type or an
unknown key inside them is refused, naming its path. Every other top-level key holds the
operator's own secrets (for example ``google.private_key``), which ``POST /auth/jwt`` can
sign with by dotted path.
Nothing here is ever returned by an HTTP endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

from docbase.core.errors import ConfigurationError
from docbase.core.plugins import lazy_module
from docbase.core.settings.limits import DATABASE_LIMITS, Limits

if TYPE_CHECKING:
    import croniter
else:  # read only when a backup schedule is stored
    croniter = lazy_module("croniter")


class SmtpSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """How to reach the SMTP server (``mail.smtp.*``)."""

    host: str = "localhost"
    """The SMTP server's host name."""
    port: int = 587
    """Its port: 587 for STARTTLS, 465 for implicit TLS, 25 for neither."""
    starttls: bool = True
    """Upgrade the connection with STARTTLS (ignored with ``tls``)."""
    tls: bool = False
    """Implicit TLS from the first byte (port 465)."""
    username: str | None = None
    """Login name; no login without it."""
    password: str | None = None
    """Login password (a secret)."""
    timeout: float = 30.0
    """Seconds to wait for the server at each step."""
    cacert: str | None = None
    """PEM certificate(s) to trust for the server instead of the system's authorities
    (``docbase settings set-file mail.smtp.cacert FILE``), e.g. a self-signed one."""


class MailSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Outbound mail (``mail.*``)."""

    transport: Literal["outbox", "smtp"] = "outbox"
    """``outbox`` captures messages without sending (the default); ``smtp`` sends them."""
    sender: str = msgspec.field(default="docbase@localhost", name="from")
    """The address messages come from (``mail.from``)."""
    smtp: SmtpSettings = SmtpSettings()


class JwtSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Verifying bearer tokens of an external identity provider (``auth.jwt.*``)."""

    secret: str | None = None
    """HMAC secret for HS256/384/512 tokens."""
    public_key: str | None = None
    """PEM public key for RS*/ES* tokens."""
    issuer: str | None = None
    """Required ``iss`` claim, when set."""
    audience: str | None = None
    """Required ``aud`` claim, when set."""
    roles_claim: str = "roles"
    """The claim holding the user's roles: a top-level claim, else a dotted path
    (``realm_access.roles``). A list of strings gives those roles, a string one role,
    anything else none."""


class LoginSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Tokens issued by ``POST /auth/login`` (``auth.login.*``)."""

    lifetime: str | int = "1d"
    """How long a login token lives: seconds, or ``"30m"``, ``"12h"``, ``"1d"``."""
    secret: str | None = None
    """HMAC secret of login tokens; generated and stored on the first login."""
    max_failures: int = 5
    """Failed logins for one email before further attempts are refused (429)."""
    lockout: str | int = "15m"
    """How long logins for that email stay refused after the last failure."""


class UserAccessSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What holders of a bearer token may do (``auth.users.*``); never delete by query."""

    paths: tuple[str, ...] = ("/rest/**",)
    """Path globs a token holder may reach."""
    methods: tuple[str, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")
    """Methods a token holder may use."""

    def __post_init__(self) -> None:
        for path in self.paths:
            if not path.startswith("/"):
                raise ConfigurationError(f"setting 'auth.users.paths': {path!r} must start "
                                         "with '/' (e.g. /rest/notes/**)")
        for method in self.methods:
            if method not in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
                raise ConfigurationError(f"setting 'auth.users.methods': unknown method "
                                         f"{method!r}")


class AuthSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Authentication (``auth.*``)."""

    jwt: JwtSettings = JwtSettings()
    login: LoginSettings = LoginSettings()
    users: UserAccessSettings = UserAccessSettings()


class RealtimeSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The change feed over server-sent events (``realtime.*``)."""

    enabled: bool = msgspec.field(default=False, name="global")
    """Serve ``GET /realtime`` (``realtime.global``)."""


SchemaMode = Literal["schemaless", "strict"]
"""How a database treats collections and fields its schemas do not define."""


class SchemaSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Schemas (``schema.*``; ``docs/schema.md``)."""

    mode: SchemaMode = "schemaless"
    """``schemaless`` (the default) creates a collection on its first write and stores
    undeclared fields; ``strict`` refuses collections and fields no schema defines."""


class MediaSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The media archive (``media.*``; ``docs/media.md``)."""

    orphan_grace: str | int = "1h"
    """How old stored bytes without metadata must be before the orphan sweep deletes
    them: seconds, or ``"30m"``, ``"1h"``, ``"1d"``. Longer than any upload takes."""


def _limits_positive(self: msgspec.Struct) -> None:
    for name in self.__struct_fields__:
        if (value := getattr(self, name)) is not None:
            try:
                Limits(**{name: value})
            except ConfigurationError as exc:  # "limits.NAME must be ..."
                raise ConfigurationError(f"setting 'limits.{name}': "
                                         + exc.message.partition(" ")[2]) from None


_LIMIT_TYPES = {info.name: info.type for info in msgspec.structs.fields(Limits)}
LimitSettings: type[msgspec.Struct] = msgspec.defstruct(
    "LimitSettings", [(name, _LIMIT_TYPES[name] | None, None) for name in DATABASE_LIMITS],
    namespace={"__doc__": "Limits of this database, lower than the server's "
                          "(``limits.*``; blank: the server's)",
               "__post_init__": _limits_positive, "documented_by": Limits},
    module=__name__, frozen=True, forbid_unknown_fields=True, kw_only=True)
"""The limits of :data:`~docbase.core.settings.limits.DATABASE_LIMITS`, each ``None``
(the server's) or a stored value, declared by :class:`Limits` (types and docs)."""


class BackupSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Scheduled backups of this database (``backups.*``; blank: the server's)."""

    schedule: str | None = None
    """When to back up: a cron expression in UTC (``0 3 * * *``: at 03:00 every day);
    blank: the server's ``backup_schedule``. Needs the server's backup directory."""
    keep: int | None = None
    """How many backups of this database to keep, the oldest deleted beyond it; blank:
    the server's ``backup_keep``."""

    def __post_init__(self) -> None:
        if self.keep is not None and self.keep < 1:
            raise ConfigurationError("setting 'backups.keep': keep at least one backup")
        if self.schedule is not None:
            try:
                croniter.croniter(self.schedule)
            except (croniter.CroniterError, ValueError) as exc:
                raise ConfigurationError(f"setting 'backups.schedule': {exc}") from None


SECTION_TYPES: dict[str, type[msgspec.Struct]] = {
    "mail": MailSettings, "auth": AuthSettings, "realtime": RealtimeSettings,
    "schema": SchemaSettings, "media": MediaSettings, "limits": LimitSettings,
    "backups": BackupSettings,
}
"""The struct typing each section of the stored settings, by its name."""
SECTIONS = frozenset(SECTION_TYPES)
"""The typed sections of the stored settings; every other top-level key is a secret."""


class DatabaseSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The stored settings of one database, typed where docbase reads them."""

    mail: MailSettings = MailSettings()
    auth: AuthSettings = AuthSettings()
    realtime: RealtimeSettings = RealtimeSettings()
    schema: SchemaSettings = SchemaSettings()
    media: MediaSettings = MediaSettings()
    limits: Any = LimitSettings()
    """A :data:`LimitSettings`."""
    backups: BackupSettings = BackupSettings()
    tree: dict[str, Any] = {}
    """The whole stored object, for secrets looked up by dotted path."""

    @classmethod
    def from_tree(cls, tree: dict[str, Any]) -> DatabaseSettings:
        """Type the stored object.

        Raises:
            ConfigurationError: a typed section holds an unknown key or a wrong type;
                the message names the path.

        """
        sections: dict[str, Any] = {name: _convert(tree[name], kind, name)
                                    for name, kind in SECTION_TYPES.items() if name in tree}
        return cls(tree=tree, **sections)

    def stored_limits(self) -> dict[str, float]:
        """The limits this database stores, by name (those set, not ``None``)."""
        return {name: value for name in self.limits.__struct_fields__
                if (value := getattr(self.limits, name)) is not None}

    def lookup(self, path: str) -> Any:
        """The value at a dotted ``path`` of the stored object.

        Raises:
            KeyError: nothing is stored there.

        """
        node: Any = self.tree
        for step in path.split("."):
            if not isinstance(node, dict) or step not in node:
                raise KeyError(path)
            node = node[step]
        return node


def _convert(value: Any, kind: type[msgspec.Struct], prefix: str) -> msgspec.Struct:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        detail, _, where = str(exc).partition(" - at `$")
        where = where.rstrip("`").lstrip(".")
        marker = "Object contains unknown field `"
        if detail.startswith(marker):
            unknown = detail.removeprefix(marker).removesuffix("`")
            path = ".".join(p for p in (prefix, where, unknown) if p)
            raise ConfigurationError(f"unknown setting {path!r}") from None
        path = ".".join(p for p in (prefix, where) if p)
        raise ConfigurationError(f"setting {path!r}: {detail}") from None
