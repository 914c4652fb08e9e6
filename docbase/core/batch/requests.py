"""The body of ``POST /batch`` (and of ``db.batch()``): its requests, checked up front.

A batch is refused whole before anything runs when its shape is wrong: not an object
with a ``requests`` array, more requests than ``limits.batch`` (413), a request whose
method is not a document write or a GET, or whose path is not under ``/rest/``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.errors import InvalidQuery, PayloadTooLarge

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
"""What a request of a batch may be: the document writes of ``/rest`` and GET."""
PASSED_HEADERS = frozenset({"if-match", "x-http-method-override", "accept"})
"""The headers of its own a request of a batch may carry (others are ignored)."""


class BatchRequest(msgspec.Struct, frozen=True):
    """One request of a batch: method, path (``/rest/...``, query string allowed), body."""

    method: str
    path: str
    body: Any = msgspec.UNSET
    headers: dict[str, str] = msgspec.field(default_factory=dict)

    def passed_headers(self) -> list[tuple[str, str]]:
        """The request's own headers a batch passes on, names lower-cased."""
        return [(name.lower(), value) for name, value in self.headers.items()
                if name.lower() in PASSED_HEADERS]


class Batch(msgspec.Struct, frozen=True):
    """A batch: its requests and whether they commit all or nothing."""

    requests: tuple[BatchRequest, ...]
    atomic: bool = True


def parse_batch(body: Any, max_requests: int) -> Batch:
    """Check and convert a decoded ``POST /batch`` body.

    Raises:
        InvalidQuery: the body is not a batch, or a request is not one a batch may run.
        PayloadTooLarge: more than ``max_requests`` requests.

    """
    if not isinstance(body, dict) or not isinstance(body.get("requests"), list):
        raise InvalidQuery('a batch is an object {"requests": [...], "atomic": true}')
    if len(body["requests"]) > max_requests:
        raise PayloadTooLarge(f"a batch holds at most {max_requests} requests "
                              f"(limits.batch), not {len(body['requests'])}")
    try:
        batch = msgspec.convert(body, Batch)
    except msgspec.ValidationError as exc:
        raise InvalidQuery(f"the batch is not well formed: {exc}") from None
    for index, request in enumerate(batch.requests):
        _check(index, request)
    return batch


def _check(index: int, request: BatchRequest) -> None:
    if request.method.upper() not in METHODS:
        raise InvalidQuery(f"request {index}: a batch runs GET, POST, PUT, PATCH and "
                           f"DELETE, not {request.method!r}")
    if not request.path.startswith("/rest/") or "#" in request.path:
        raise InvalidQuery(f"request {index}: the path must start with /rest/, not "
                           f"{request.path!r}")
    for name, value in request.passed_headers():
        if not all(c == "\t" or " " <= c <= "~" or "\x80" <= c <= "\xff" for c in value):
            raise InvalidQuery(f"request {index}: the {name} header must be one line of "
                               f"ISO-8859-1 text, not {value!r}")
