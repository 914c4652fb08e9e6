"""References to earlier answers of a batch: ``{N.field}`` in a path, ``{"$ref": "N.field"}``.

``N`` is the index of an earlier request, ``field`` a dotted path into its answer's
body (``0._id``, ``1.result.0``, ``2.0._id`` for the first document of an array).
A reference to a later request, to a request that failed, or to a field its answer
lacks is refused (400) for the request that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery

_IN_PATH = re.compile(r"\{(\d+)((?:\.[^.{}/?]+)+)\}")


_UNDECODED: Any = object()


class Answer:
    """One answer of a batch: the status and the body (decoded when first asked for)."""

    __slots__ = ("_body", "_raw", "status")

    def __init__(self, status: int, body: Any) -> None:
        self.status, self._body, self._raw = status, body, b""

    @classmethod
    def encoded(cls, status: int, content: bytes) -> Answer:
        """The answer whose body is the JSON text ``content`` (empty: ``None``).

        It is decoded only when :attr:`body` is read (a reference into it, a failure);
        the batch's own answer carries the text as it is. Text that is not JSON is
        the body as a string.
        """
        answer = cls(status, _UNDECODED if content.strip() else None)
        answer._raw = content
        return answer

    @property
    def body(self) -> Any:
        """The decoded body."""
        if self._body is _UNDECODED:
            try:
                self._body = msgspec.json.decode(self._raw)
            except msgspec.DecodeError:
                self._body = self._raw.decode("utf-8", "replace")
        return self._body

    def as_json(self) -> dict[str, Any]:
        """``{"status": S, "body": B}``, as the batch answers it (``B`` JSON text or a value)."""
        if self._body is _UNDECODED:
            try:  # the text is sent as it came, once known to be JSON
                text = msgspec.json.decode(self._raw, type=msgspec.Raw)
            except msgspec.DecodeError:
                return {"status": self.status, "body": self.body}
            return {"status": self.status, "body": text}
        return {"status": self.status, "body": self._body}


def _value(reference: str, answers: Sequence[Answer]) -> Any:
    head, _, rest = reference.partition(".")
    if not head.isdigit() or not rest:
        raise InvalidQuery(f"reference {reference!r} is not N.field")
    index = int(head)
    if index >= len(answers):
        raise InvalidQuery(f"reference {reference!r} names request {index}, which has "
                           "not run before this one")
    answer = answers[index]
    if answer.status >= 400:
        raise InvalidQuery(f"reference {reference!r} names request {index}, which failed")
    value = answer.body
    for step in rest.split("."):
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise InvalidQuery(f"reference {reference!r}: the answer of request {index} "
                               f"has no {rest!r}")
    return value


def resolve_path(path: str, answers: Sequence[Answer]) -> str:
    """``path`` with each ``{N.field}`` replaced by that value (a string or number).

    Raises:
        InvalidQuery: a reference that cannot be resolved, or to an object or array.

    """
    def one(match: re.Match[str]) -> str:
        value = _value(match.group(1) + match.group(2), answers)
        if isinstance(value, dict | list) or value is None:
            raise InvalidQuery(f"reference {match.group(0)} in a path is not a string "
                               "or a number")
        return str(value).lower() if isinstance(value, bool) else str(value)

    return _IN_PATH.sub(one, path)


def resolve_body(body: Any, answers: Sequence[Answer]) -> Any:
    """``body`` with each ``{"$ref": "N.field"}`` object replaced by that value.

    Raises:
        InvalidQuery: a reference that cannot be resolved.

    """
    if isinstance(body, dict):
        if len(body) == 1 and isinstance(body.get("$ref"), str):
            return _value(body["$ref"], answers)
        return {key: resolve_body(value, answers) for key, value in body.items()}
    if isinstance(body, list):
        return [resolve_body(item, answers) for item in body]
    return body
