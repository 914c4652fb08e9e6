"""The one status table: how each docbase error class answers over HTTP, and back.

:data:`ERROR_STATUSES` gives each error class its status and, where it is not the
class's own name, the ``name`` of its JSON error body. :mod:`docbase.http.errors`
answers with it; the remote client (:mod:`docbase.client.errors`) reads an error body
back into the same class with it, so the two never drift. This module imports no web
framework: the client imports it without litestar.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from docbase.core.errors import (
    BackendError,
    ConfigurationError,
    Conflict,
    DocbaseError,
    Forbidden,
    HookFailed,
    HookTimedOut,
    InvalidImage,
    InvalidQuery,
    InvalidToken,
    MailDeliveryError,
    NotFound,
    PayloadTooLarge,
    RangeNotSatisfiable,
    Rejected,
    TooManyRequests,
    TransactionsUnsupported,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    VersionMismatch,
    WebhookDeliveryError,
)

__all__ = ["ERROR_STATUSES", "ErrorAnswer", "MethodNotAllowed", "NotImplementedHere",
           "answer_for"]


class MethodNotAllowed(DocbaseError):
    """The path exists but does not take this method (or method override); 405."""


class NotImplementedHere(DocbaseError):
    """The path and method are known but the operation is not implemented (501)."""


class ErrorAnswer(NamedTuple):
    """How an error class answers over HTTP: its status and, if not its class name, name."""

    status: int
    name: str | None = None


ERROR_STATUSES: Mapping[type[DocbaseError], ErrorAnswer] = MappingProxyType({
    DocbaseError: ErrorAnswer(500),
    ConfigurationError: ErrorAnswer(500),
    InvalidQuery: ErrorAnswer(400),
    UnsupportedMediaType: ErrorAnswer(415),
    Unauthorized: ErrorAnswer(401),
    InvalidToken: ErrorAnswer(401, "Unauthorized"),
    Forbidden: ErrorAnswer(403),
    NotFound: ErrorAnswer(404),
    MethodNotAllowed: ErrorAnswer(405),
    Conflict: ErrorAnswer(409),
    # over HTTP an expected version only ever comes from If-Match
    VersionMismatch: ErrorAnswer(412, "PreconditionFailed"),
    PayloadTooLarge: ErrorAnswer(413),
    RangeNotSatisfiable: ErrorAnswer(416),
    InvalidImage: ErrorAnswer(422),
    NotImplementedHere: ErrorAnswer(501, "NotImplemented"),
    TransactionsUnsupported: ErrorAnswer(501),
    TooManyRequests: ErrorAnswer(429),
    ValidationFailed: ErrorAnswer(422),
    MailDeliveryError: ErrorAnswer(502),
    WebhookDeliveryError: ErrorAnswer(502),
    BackendError: ErrorAnswer(503),
    Rejected: ErrorAnswer(400),
    HookFailed: ErrorAnswer(500),
    HookTimedOut: ErrorAnswer(504),
})
"""The one status table: each docbase error class and how it answers over HTTP."""


def answer_for(error: type[DocbaseError]) -> ErrorAnswer:
    """Return the status and body name of an error class, from :data:`ERROR_STATUSES`.

    The class's own entry counts, else that of its nearest listed ancestor; the body
    name is the table's name for the class that matched, else the class's own name.
    """
    for cls in error.__mro__:
        answer = ERROR_STATUSES.get(cls)
        if answer is not None:
            return ErrorAnswer(answer.status, answer.name or error.__name__)
    return ErrorAnswer(500, error.__name__)  # unreachable: DocbaseError is listed
