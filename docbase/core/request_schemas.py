"""The schemas read once per request and shared by everything the request does.

One request asks the schemas in many places: the validate and access stages, the store
that enforces unique and password fields (``schema/enforcing.py``), the read road that resolves
lookups and hides fields. Each asked the registry, a
:class:`~docbase.core.schema.stored_schemas.SchemaRegistry`
read through the system cache (about 8 µs), two to four times per request. Inside
:class:`OneSchemaRead` the first of them reads the registry and the others reuse what it
read (``tests/test_schema_read_once.py`` counts them).

The snapshot lives as long as the request and no longer: a context variable set on entry
and closed on exit. A task the request started and that outlives it (a change-feed
reader, a group commit) therefore asks the registry again, and a schema another process
changed applies to this process's next request exactly as before
(``schema/stored_schemas.py``). A schema changed inside the request (a hook, a batch) drops the
snapshot, so what follows reads the new one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from docbase.core.schema.model import CollectionSchema

P = ParamSpec("P")
R = TypeVar("R")


class RequestSchemas:
    """The schemas one request read of one registry (``None`` until first asked)."""

    __slots__ = ("closed", "owner", "schemas")

    def __init__(self, owner: object) -> None:
        self.owner = owner
        self.schemas: dict[str, CollectionSchema] | None = None
        self.closed = False


_CURRENT: contextvars.ContextVar[RequestSchemas | None] = contextvars.ContextVar(
    "docbase_request_schemas", default=None
)


def current_snapshot(owner: object) -> RequestSchemas | None:
    """The open snapshot of ``owner``'s schemas for the request running, if any."""
    snapshot = _CURRENT.get()
    return None if snapshot is None or snapshot.closed or snapshot.owner is not owner \
        else snapshot


class OneSchemaRead:
    """Within the block, ``owner``'s schemas are read at most once (nested: the outer's)."""

    __slots__ = ("_snapshot", "_token", "owner")

    def __init__(self, owner: object) -> None:
        self.owner = owner
        self._snapshot: RequestSchemas | None = None
        self._token: contextvars.Token[RequestSchemas | None] | None = None

    def __enter__(self) -> None:
        if current_snapshot(self.owner) is None:
            self._snapshot = RequestSchemas(self.owner)
            self._token = _CURRENT.set(self._snapshot)

    def __exit__(self, *exc_info: object) -> None:
        if self._snapshot is not None and self._token is not None:
            self._snapshot.closed = True
            _CURRENT.reset(self._token)


class HoldsSchemas(Protocol):
    """Whatever reaches the registry whose reads a request shares (a collection handle)."""

    @property
    def schema_owner(self) -> object:
        """The registry the request's schemas are read from."""


S = TypeVar("S", bound=HoldsSchemas)


def reads_schemas_once(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """Run an ``async`` method of a collection handle as one request: one schema read."""

    @wraps(method)
    async def once(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with OneSchemaRead(self.schema_owner):  # inside a request already: the outer's
            return await method(self, *args, **kwargs)

    return once
