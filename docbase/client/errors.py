"""The one place that reads an error answer back into the exception the library raises.

A docbase server answers every error as ``{"name", "message", "status"}`` (plus
``"list"`` for a validation error and ``"result"`` for a mail delivery error). The
server picks the name from :data:`docbase.http.statuses.ERROR_STATUSES`;
:func:`error_from_answer` reads it back through the same table, so a remote call raises
the class the embedded call raises (``NotFound``, ``VersionMismatch``,
``ValidationFailed`` with its fields, ...). A name the table does not know (an error of
the web framework, a proxy's page) falls back to the table's class for the status.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import msgspec

from docbase.core.errors import (
    ConfigurationError,
    DocbaseError,
    FieldError,
    HookFailed,
    InvalidToken,
    MailDeliveryError,
    MissingDependencyError,
    RangeNotSatisfiable,
    TooManyRequests,
    Unauthorized,
    ValidationFailed,
)
from docbase.http.statuses import ERROR_STATUSES, answer_for

__all__ = ["error_class", "error_from_answer", "error_from_body", "is_error_body"]


def _subclasses(root: type[DocbaseError]) -> Iterator[type[DocbaseError]]:
    yield root
    for sub in root.__subclasses__():
        yield from _subclasses(sub)


@cache
def _by_name() -> Mapping[str, type[DocbaseError]]:
    """Each body name and the class answering with it (a class's own name wins a tie)."""
    names: dict[str, type[DocbaseError]] = {}
    for cls in _subclasses(DocbaseError):
        name = answer_for(cls).name or cls.__name__
        if name not in names or cls.__name__ == name:
            names[name] = cls
    return names


@cache
def _by_status() -> Mapping[int, type[DocbaseError]]:
    """Each status and the first class of the table answering with it."""
    statuses: dict[int, type[DocbaseError]] = {}
    for cls, answer in ERROR_STATUSES.items():
        statuses.setdefault(answer.status, cls)
    return statuses


def error_class(name: object, status: int) -> type[DocbaseError]:
    """The class an error body of ``name`` and ``status`` stands for."""
    found = _by_name().get(name) if isinstance(name, str) else None
    if found is not None and answer_for(found).status == status:
        return found
    return _by_status().get(status, DocbaseError)


def _content_size(headers: Mapping[str, str]) -> int:
    total = headers.get("content-range", "").rpartition("/")[2]
    return int(total) if total.isdigit() else 0


def error_from_answer(status: int, body: bytes, headers: Mapping[str, str]) -> DocbaseError:
    """The exception an error answer (``status``, JSON ``body``) stands for."""
    try:
        data: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        data = None
    if not isinstance(data, dict):
        data = {"message": f"the server answered {status} without a docbase error body"}
    return error_from_body(status, data, headers)


def is_error_body(item: object) -> bool:
    """Whether an element of an answer is an error body (an item ``validate=false`` refused)."""
    return isinstance(item, dict) and {"name", "message", "status"} <= item.keys() \
        and "_id" not in item


def error_from_body(status: int, data: Mapping[str, Any],
                    headers: Mapping[str, str] | None = None) -> DocbaseError:
    """The exception a decoded error body stands for."""
    headers = headers or {}
    message = str(data.get("message", ""))
    cls = error_class(data.get("name"), status)
    if cls is Unauthorized and 'error="invalid_token"' in headers.get("www-authenticate", ""):
        cls = InvalidToken  # answered under its parent's name, told apart by its challenge
    if issubclass(cls, ValidationFailed):
        fields = [FieldError(str(f.get("field", "")), tuple(f.get("message") or ()))
                  for f in data.get("list") or () if isinstance(f, dict)]
        return cls(message, fields)
    if issubclass(cls, TooManyRequests):
        retry = headers.get("retry-after", "1")
        return cls(message, int(retry) if retry.isdigit() else 1)
    if issubclass(cls, RangeNotSatisfiable):
        return cls(message, _content_size(headers))
    if issubclass(cls, MailDeliveryError):
        return cls(message, data.get("result") or ())
    if issubclass(cls, HookFailed):
        return cls(message, hook="")
    if issubclass(cls, MissingDependencyError):
        return ConfigurationError(message)
    return cls(message)
