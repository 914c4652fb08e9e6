"""``async with db.batch() as batch:`` on a remote database: one ``POST /batch``.

The embedded block runs each write at once inside one transaction
(:mod:`docbase.core.batch.unit`). Over HTTP the writes of the block (and its
``get``/``find``) are queued instead, each call returning a pending answer whose fields
are references (:mod:`docbase.client.pending`), and the end of the block sends them as
one ``POST /batch`` with one ``Idempotency-Key``, sent again per the transport's
retries. Its answer fills every pending answer; an error answer raises the exception
the embedded block raises (:mod:`docbase.client.errors`). A block that raises sends
nothing when atomic; with ``atomic=False`` it sends what it queued before raising,
since those writes would have been applied one by one embedded. ``docs/client.md``
lists what differs from the embedded block.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import msgspec

from docbase.client.errors import error_from_body
from docbase.client.pending import PendingDocument, PendingList, Slot, encode_references

if TYPE_CHECKING:
    from docbase.client.transport import Transport

__all__ = ["RemoteBatch", "current_batch", "running"]

Pending = PendingDocument | PendingList
Finish = Callable[[Any], Any]
"""What a call makes of its request's answer body (``delete``: the ids of ``result``)."""


class RemoteBatch:
    """The requests a block queued, and after it was sent, the batch's id and answers."""

    def __init__(self, transport: Transport, *, atomic: bool) -> None:
        self.transport = transport
        self.atomic = atomic
        self.requests: list[dict[str, Any]] = []
        self.pending: list[tuple[Pending, Finish]] = []
        self.batch_id: str | None = None
        """The id the server gave the batch (``X-Batch-Id``), once it was sent."""
        self.responses: list[dict[str, Any]] = []
        """``{"status", "body"}`` of each request, once the batch answered."""

    def add(self, method: str, path: str, *, kind: type[Pending], finish: Finish,
            prefix: tuple[str, ...] = (), params: Mapping[str, str] | None = None,
            json: Any = None, headers: Mapping[str, str] | None = None) -> Pending:
        """Queue one request; the pending answer the call returns meanwhile."""
        request: dict[str, Any] = {"method": method,
                                   "path": path + (f"?{urlencode(params)}" if params else "")}
        if json is not None:
            request["body"] = msgspec.to_builtins(
                json, enc_hook=lambda value: encode_references(value, self))
        if headers:
            request["headers"] = dict(headers)
        pending = kind(Slot(self, len(self.requests)), prefix)
        self.requests.append(request)
        self.pending.append((pending, finish))
        return pending

    def forget_from(self, index: int) -> None:
        """Drop the requests queued from ``index`` on (an inner block that raised)."""
        self.close(index)
        del self.requests[index:], self.pending[index:]

    def close(self, start: int = 0) -> None:
        """Close the slots from ``start`` on, so that their references are sent no more.

        A pending answer the batch's answer does not fill stays empty from then on.
        """
        for pending, _ in self.pending[start:]:
            pending.reference.slot.open = False

    async def send(self) -> None:
        """``POST /batch`` the queued requests; fill each pending answer.

        Raises:
            DocbaseError: the first failing request's error (an atomic batch stored
                nothing; one that is not atomic stored the other requests).
            BackendError: the server could not be reached, after the retries.

        """
        self.close()
        if not self.requests:
            return
        response = await self.transport.send(
            "POST", "/batch", json={"requests": self.requests, "atomic": self.atomic},
            keyed=True)
        self.batch_id = response.headers.get("x-batch-id")
        self.responses = msgspec.json.decode(response.content)["responses"]
        failure = None
        for (pending, finish), answer in zip(self.pending, self.responses, strict=True):
            if answer["status"] < 400:
                pending.fill(finish(answer["body"]))
            elif failure is None:
                failure = error_from_body(answer["status"], answer["body"])
        if failure is not None:
            raise failure


_batches: ContextVar[tuple[RemoteBatch, ...]] = ContextVar("docbase_remote_batches",
                                                           default=())
"""The open batches of the running task, one per remote database at most."""


def current_batch(transport: Transport) -> RemoteBatch | None:
    """The batch the running task queues the requests of ``transport`` in, or ``None``."""
    return next((b for b in _batches.get() if b.transport is transport), None)


@contextlib.asynccontextmanager
async def running(transport: Transport, *, atomic: bool) -> AsyncIterator[RemoteBatch]:
    """Queue the block's requests of ``transport``; send them as one batch at its end.

    A block inside a block joins the outer batch; if an atomic one raises, its requests
    are dropped (as the embedded inner block's savepoint is rolled back).
    """
    outer = current_batch(transport)
    if outer is not None:
        start = len(outer.requests)
        try:
            yield outer
        except BaseException:
            if atomic:
                outer.forget_from(start)
            raise
        return
    batch = RemoteBatch(transport, atomic=atomic)
    token = _batches.set((*_batches.get(), batch))
    try:
        yield batch
    except Exception:
        if not atomic:
            await batch.send()
        raise
    finally:
        _batches.reset(token)
        batch.close()
    await batch.send()
