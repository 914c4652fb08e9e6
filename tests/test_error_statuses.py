"""The one status table of docbase.http.errors: core errors carry no HTTP status."""

from __future__ import annotations

import inspect

import pytest

from docbase.adapters.sql.errors import MissingTable
from docbase.core import errors
from docbase.core.errors import DocbaseError, InvalidId, VersionMismatch
from docbase.http.errors import ERROR_STATUSES, ErrorAnswer, MethodNotAllowed, answer_for

CORE_ERRORS = [cls for _, cls in inspect.getmembers(errors, inspect.isclass)
               if issubclass(cls, DocbaseError)]

EXPECTED = {
    "DocbaseError": 500,
    "ConfigurationError": 500,
    "UnknownSchemeError": 500,
    "MissingDependencyError": 500,
    "InvalidQuery": 400,
    "InvalidId": 400,
    "RegexTimeout": 400,
    "QueryTimeout": 400,
    "UnsupportedMediaType": 415,
    "NotFound": 404,
    "ValidationFailed": 422,
    "Conflict": 409,
    "VersionMismatch": 412,
    "Unauthorized": 401,
    "InvalidToken": 401,
    "Forbidden": 403,
    "TooManyRequests": 429,
    "PayloadTooLarge": 413,
    "InvalidImage": 422,
    "RangeNotSatisfiable": 416,
    "MailDeliveryError": 502,
    "MailTransportDown": 502,
    "WebhookDeliveryError": 502,
    "BackendError": 503,
    "Rejected": 400,
    "HookFailed": 500,
    "HookTimedOut": 504,
    "IdempotencyKeyReused": 422,
    "IdempotencyKeyInUse": 409,
    "TransactionsUnsupported": 501,
}


def test_every_core_error_has_a_status_in_the_table() -> None:
    assert {cls.__name__ for cls in CORE_ERRORS} == set(EXPECTED)
    for cls in CORE_ERRORS:
        assert answer_for(cls).status == EXPECTED[cls.__name__], cls.__name__
        assert any(ancestor in ERROR_STATUSES for ancestor in cls.__mro__), cls.__name__


@pytest.mark.parametrize("cls", CORE_ERRORS, ids=lambda cls: cls.__name__)
def test_core_errors_carry_no_status(cls: type[DocbaseError]) -> None:
    assert not hasattr(cls, "status")
    assert "status" not in vars(cls)


def test_statuses_live_only_in_the_table() -> None:
    assert not hasattr(MethodNotAllowed, "status")
    assert answer_for(MethodNotAllowed) == ErrorAnswer(405, "MethodNotAllowed")


def test_a_subclass_answers_like_its_nearest_listed_ancestor_under_its_own_name() -> None:
    assert answer_for(InvalidId) == ErrorAnswer(400, "InvalidId")
    assert answer_for(MissingTable) == ErrorAnswer(503, "MissingTable")


def test_a_version_mismatch_answers_412_precondition_failed() -> None:
    assert answer_for(VersionMismatch) == ErrorAnswer(412, "PreconditionFailed")
