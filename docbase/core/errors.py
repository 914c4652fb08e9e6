"""The one error tree of docbase.

Every error that docbase raises on purpose derives from :class:`DocbaseError`::

    DocbaseError
    ├── ConfigurationError        bad settings or an unknown storage URL
    │   ├── UnknownSchemeError    no adapter registered for the URL scheme
    │   └── MissingDependencyError  the adapter's optional driver is not installed
    ├── InvalidQuery              malformed q/h/URL parameter or update body
    │   ├── InvalidId             not a 24-hex ObjectID
    │   ├── QueryTimeout          a query ran past ``limits.query_timeout``
    │   │   └── RegexTimeout      a ``$regex`` ran past its time limit on one value
    │   └── UnsupportedMediaType  a body (or upload) of a content type not read here
    ├── NotFound                  unknown document, collection or blob
    ├── ValidationFailed          schema validation failed; carries ``fields``
    │   └── IdempotencyKeyReused  an ``Idempotency-Key`` sent again with another request
    ├── Conflict                  duplicate unique value, bad update target
    │   ├── VersionMismatch       expected ``_version`` differs
    │   └── IdempotencyKeyInUse   a request with the same ``Idempotency-Key`` is unfinished
    ├── Unauthorized              no, unknown, expired or revoked credential
    │   └── InvalidToken          a bearer token that is malformed, expired, revoked or not ours
    ├── Forbidden                 valid credential, action not allowed
    ├── TooManyRequests           too many attempts (failed logins); carries ``retry_after``
    ├── PayloadTooLarge           body, bulk array or file over its limit
    ├── InvalidImage              an image that cannot be decoded or is too large to process
    ├── RangeNotSatisfiable       a byte range outside the content; carries ``size``
    ├── Rejected                  a server-side hook refused the request
    ├── HookFailed                a server-side hook raised; names the hook
    │   └── HookTimedOut          a server-side hook overran its time limit
    ├── MailDeliveryError         the mail transport refused a message
    │   └── MailTransportDown     the mail transport cannot be reached at all
    ├── WebhookDeliveryError      a webhook receiver could not be reached or refused
    ├── TransactionsUnsupported   the storage engine has no multi-document transactions
    └── BackendError              the storage backend failed or is unreachable

Adapters translate their driver's errors in one context manager and raise
``BackendError(...) from exc``. The classes carry no HTTP status: the one table in
``docbase/http/errors.py`` maps each of them (and, along the class hierarchy, every
subclass) to its status and JSON body (``docs/http.md``).
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


class InvalidId(InvalidQuery):
    """A value that must be an ObjectID is not 24 hexadecimal characters."""


class UnsupportedMediaType(InvalidQuery):
    """A request body or upload has a content type this operation does not read."""


class QueryTimeout(InvalidQuery):
    """A query ran longer than ``limits.query_timeout`` allows one store operation."""


class RegexTimeout(QueryTimeout):
    """A ``$regex`` took longer than its time limit on one value (it backtracks badly)."""


class NotFound(DocbaseError):
    """The document, collection or blob does not exist."""


class ValidationFailed(DocbaseError):
    """A document failed schema validation; ``fields`` lists each failing field."""

    def __init__(self, message: str, fields: Sequence[FieldError] = ()) -> None:
        super().__init__(message)
        self.fields = tuple(fields)


class IdempotencyKeyReused(ValidationFailed):
    """An ``Idempotency-Key`` already answered another method, path or body (422)."""


class Conflict(DocbaseError):
    """A write collides with stored state (duplicate unique value, bad update target)."""


class IdempotencyKeyInUse(Conflict):
    """The first request with this ``Idempotency-Key`` has not answered yet (409)."""


class VersionMismatch(Conflict):
    """The document's ``_version`` is not the one the caller expected."""


class Unauthorized(DocbaseError):
    """No credential, or an unknown, expired or revoked one."""


class InvalidToken(Unauthorized):
    """A bearer token is malformed, expired, not yet valid, revoked or not ours."""


class TooManyRequests(DocbaseError):
    """Too many attempts; ``retry_after`` says in how many seconds to try again."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Forbidden(DocbaseError):
    """The credential is valid but does not allow this action."""


class PayloadTooLarge(DocbaseError):
    """A body, bulk array or file exceeds its configured limit."""


class InvalidImage(DocbaseError):
    """An uploaded image cannot be read, or has too many pixels to process in time."""


class RangeNotSatisfiable(DocbaseError):
    """A requested byte range lies outside the content; ``size`` is the content's size."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class Rejected(DocbaseError):
    """A server-side hook refused the request; its message is the hook's.

    A hook may equally raise :class:`Unauthorized`, :class:`Forbidden`,
    :class:`NotFound`, :class:`Conflict` or :class:`ValidationFailed` to refuse with
    their meaning (``docs/hooks.md``, "Rejecting a request").
    """


class HookFailed(DocbaseError):
    """A server-side hook raised an unexpected exception; ``hook`` names it."""

    def __init__(self, message: str, hook: str) -> None:
        super().__init__(message)
        self.hook = hook


class HookTimedOut(HookFailed):
    """A server-side hook did not finish within its time limit."""


class MailDeliveryError(DocbaseError):
    """The mail transport refused or failed to deliver a message.

    ``results`` is, for a request of several messages, the outcome of each one
    (``{"email_outbound_id", "status", "error"}``).
    """

    def __init__(self, message: str, results: Sequence[dict[str, str | None]] = ()) -> None:
        super().__init__(message)
        self.results = tuple(results)


class MailTransportDown(MailDeliveryError):
    """The mail transport cannot be reached (connection or login failed)."""


class TransactionsUnsupported(DocbaseError):
    """The storage engine has no multi-document transactions (an atomic batch: 501)."""


class WebhookDeliveryError(DocbaseError):
    """A webhook delivery failed: no answer, a refused address, or a non-2xx answer.

    ``receiver_status`` is the status the receiver answered, if it answered.
    """

    def __init__(self, message: str, receiver_status: int | None = None) -> None:
        super().__init__(message)
        self.receiver_status = receiver_status


class BackendError(DocbaseError):
    """The storage backend failed or is unreachable; the cause is chained."""

