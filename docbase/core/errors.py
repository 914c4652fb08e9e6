"""The one error tree of docbase.

Every error that docbase raises on purpose derives from :class:`DocbaseError`::

    DocbaseError
    ├── ConfigurationError        bad settings or an unknown storage URL
    │   ├── UnknownSchemeError    no adapter registered for the URL scheme
    │   └── MissingDependencyError  the adapter's optional driver is not installed
    ├── InvalidQuery              malformed q/h/URL parameter or update body (400)
    ├── InvalidId                 not a 24-hex ObjectID (400)
    ├── NotFound                  unknown document, collection or blob (404)
    ├── ValidationFailed          schema validation failed; carries ``fields`` (422)
    ├── Conflict                  duplicate unique value, bad update target (409)
    │   └── VersionMismatch       expected ``_version`` differs (409, 412 for If-Match)
    ├── Unauthorized              no, unknown, expired or revoked credential (401)
    ├── Forbidden                 valid credential, action not allowed (403)
    ├── PayloadTooLarge           body, bulk array or file over its limit (413)
    ├── MailDeliveryError         the mail transport refused a message (502)
    └── BackendError              the storage backend failed or is unreachable (503)

Adapters translate their driver's errors in one context manager and raise
``BackendError(...) from exc``. ``docbase.http`` is the only place that maps these
classes to HTTP status codes and JSON bodies.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec


class FieldError(msgspec.Struct, frozen=True):
    """One failing field of a validation error."""

    field: str
    message: tuple[str, ...]


class DocbaseError(Exception):
    """Root of every error docbase raises on purpose."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigurationError(DocbaseError):
    """Settings are invalid; the message names the offending key."""


class UnknownSchemeError(ConfigurationError):
    """No adapter is registered for a storage URL's scheme."""


class MissingDependencyError(ConfigurationError):
    """The chosen adapter needs an optional package that is not installed."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"the {package!r} package is required for this storage; "
            f"install it with: pip install 'docbase[{extra}]'"
        )
        self.package = package
        self.extra = extra


class InvalidQuery(DocbaseError):
    """A query, hint, URL parameter or update body is malformed or unsupported."""

    status = 400


class InvalidId(InvalidQuery):
    """A value that must be an ObjectID is not 24 hexadecimal characters."""


class NotFound(DocbaseError):
    """The document, collection or blob does not exist."""

    status = 404


class ValidationFailed(DocbaseError):
    """A document failed schema validation; ``fields`` lists each failing field."""

    status = 422

    def __init__(self, message: str, fields: Sequence[FieldError] = ()) -> None:
        super().__init__(message)
        self.fields = tuple(fields)


class Conflict(DocbaseError):
    """A write collides with stored state (duplicate unique value, bad update target)."""

    status = 409


class VersionMismatch(Conflict):
    """The document's ``_version`` is not the one the caller expected."""


class Unauthorized(DocbaseError):
    """No credential, or an unknown, expired or revoked one."""

    status = 401


class Forbidden(DocbaseError):
    """The credential is valid but does not allow this action."""

    status = 403


class PayloadTooLarge(DocbaseError):
    """A body, bulk array or file exceeds its configured limit."""

    status = 413


class MailDeliveryError(DocbaseError):
    """The mail transport refused or failed to deliver a message."""

    status = 502


class BackendError(DocbaseError):
    """The storage backend failed or is unreachable; the cause is chained."""

    status = 503
