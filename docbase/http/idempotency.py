"""``Idempotency-Key`` on the writes of ``/rest`` and on ``POST /batch``.

:func:`idempotent` is an ASGI middleware attached to those route handlers only (a read
pays nothing for it). A request without the header passes untouched. With it, the
middleware identifies the credential (as the handler will: an unknown one passes on to
be refused there), reads the body, and asks :mod:`docbase.core.idempotency` to claim
the key for that credential and request: a retry of an answered request gets the
stored answer (with ``Idempotent-Replayed: true``) and nothing runs; the key with
another method, path or body is 422. Otherwise the request runs and its answer is
stored (a 5xx keeps nothing, so a retry runs again).

On a store with transactions (:class:`Keyed`) the claim, the write and the stored
answer are one unit of work (:func:`~docbase.core.batch.atomically`), answered after
its commit: a concurrent request with the key waits for that commit and replays, and
a process killed before the commit leaves nothing behind. On MongoDB the claim is
committed first and the answer after; a key whose first request has not answered yet
(still running, or its process died between the two) is 409.
"""

from __future__ import annotations

from typing import Any

from litestar import Request

from docbase.core.batch.unit import atomically
from docbase.core.errors import DocbaseError, PayloadTooLarge, TransactionsUnsupported
from docbase.core.idempotency import (
    Claim,
    StoredAnswer,
    claim,
    fingerprint,
    forget,
    remember,
)
from docbase.http.context import (
    SERVER_STATE,
    RequestContext,
    authenticate_credential,
    identify,
)
from docbase.http.errors import docbase_error
from docbase.http.headers import header

Scope = Any
Message = dict[str, Any]
ASGIApp = Any

KEY_HEADER = "idempotency-key"
REPLAYED = (b"idempotent-replayed", b"true")
_REPEATED_HEADERS = frozenset({"content-type", "etag", "location", "x-batch-id"})


def owner_of(principal: Any) -> str:
    """Who a key belongs to: the API key's id, else the kind and author of the caller."""
    return f"{principal.kind}:{principal.key_id or principal.author}"


async def _identified(request: Request[Any, Any, Any]) -> RequestContext | None:
    try:
        return await identify(request, request.app.state[SERVER_STATE],
                              authenticate_credential)
    except (DocbaseError, KeyError):  # the handler answers it as it would without a key
        return None


async def _read_body(receive: Any, limit: int) -> tuple[bytes, list[Message]]:
    """The whole body and its messages, to replay; ``PayloadTooLarge`` past ``limit``."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        size += len(message.get("body", b""))
        if size > limit:
            raise PayloadTooLarge(f"the request body exceeds the limit of {limit} bytes")
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    return b"".join(m.get("body", b"") for m in messages), messages


def idempotent(app: ASGIApp) -> ASGIApp:
    """Wrap a write handler's ASGI app so that ``Idempotency-Key`` is honoured."""

    async def middleware(scope: Scope, receive: Any, send: Any) -> None:
        request: Request[Any, Any, Any] = Request(scope, receive)
        key = header(request, KEY_HEADER)
        if key is None:
            await app(scope, receive, send)
            return
        ctx = await _identified(request)
        if ctx is None:
            await app(scope, receive, send)
            return
        try:
            body, messages = await _read_body(receive, ctx.database.limits.max_body_bytes)
        except PayloadTooLarge as exc:
            await _send_error(request, exc, scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        query = scope.get("query_string", b"").decode("latin-1")
        digest = fingerprint(ctx.method, f"{ctx.path}?{query}", body)
        keyed = Keyed(request, ctx, key, digest)
        if await keyed.in_one_transaction(app, replay, send):
            return
        try:
            claimed = await claim(ctx.database, owner_of(ctx.principal), key, digest)
        except DocbaseError as exc:
            await _send_error(request, exc, scope, receive, send)
            return
        if claimed.answer is not None:
            await _send_stored(claimed.answer, send)
            return
        await _run_and_remember(app, scope, replay, send, ctx=ctx, claimed=claimed)

    return middleware


class _ServerFailed(Exception):  # rolls the unit back, answers as it is
    """The request answered 5xx: nothing of it is kept, the claim neither."""


class Keyed:
    """A request with a key, run with its claim and answer in one transaction."""

    def __init__(self, request: Request[Any, Any, Any], ctx: RequestContext, key: str,
                 digest: str) -> None:
        self.request, self.ctx, self.key, self.digest = request, ctx, key, digest

    async def in_one_transaction(self, app: ASGIApp, receive: Any, send: Any) -> bool:
        """Claim, run and remember in one transaction; ``False``: the store has none.

        The claim, the write and its stored answer commit together, and the answer
        goes out only after the commit: a process killed before it leaves nothing, so
        the retry runs afresh; one killed after it leaves the answer to replay. A
        concurrent request with the key waits for the claim's commit, then replays.
        """
        held: list[Message] = []

        async def capture(message: Message) -> None:
            held.append(message)

        stored: StoredAnswer | None = None
        try:
            async with atomically(self.ctx.database.store, None):
                claimed = await claim(self.ctx.database, owner_of(self.ctx.principal),
                                      self.key, self.digest)
                if claimed.answer is not None:
                    stored = claimed.answer
                else:
                    await app(self.request.scope, receive, capture)
                    answer = _answer_of(held)
                    if answer.status >= 500:
                        raise _ServerFailed
                    await remember(self.ctx.database, claimed, answer)
        except TransactionsUnsupported:
            return False
        except _ServerFailed:
            pass
        except DocbaseError as exc:
            await _send_error(self.request, exc, self.request.scope, receive, send)
            return True
        if stored is not None:
            await _send_stored(stored, send)
            return True
        for message in held:
            await send(message)
        return True


def _answer_of(messages: list[Message]) -> StoredAnswer:
    start = next((m for m in messages if m["type"] == "http.response.start"), {})
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    headers = tuple((name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in start.get("headers", ())
                    if name.decode("latin-1").lower() in _REPEATED_HEADERS)
    return StoredAnswer(int(start.get("status", 500)), body, headers)


async def _run_and_remember(app: ASGIApp, scope: Scope, receive: Any, send: Any, *,
                            ctx: RequestContext, claimed: Claim) -> None:
    """Run the request; store its answer before the client hears the end of it."""
    held: list[Message] = []
    chunks: list[bytes] = []
    finished = False

    async def capture(message: Message) -> None:
        nonlocal finished
        held.append(message)
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                finished = True
                await _settle(ctx, claimed, held[0], b"".join(chunks))
                for each in held:
                    await send(each)
                held.clear()

    try:
        await app(scope, receive, capture)
    except BaseException:
        if not finished:
            await forget(ctx.database, claimed)
        raise


async def _settle(ctx: RequestContext, claimed: Claim, start: Message, body: bytes) -> None:
    answer = _answer_of([start, {"type": "http.response.body", "body": body}])
    if answer.status >= 500:  # the server failed, not the request: a retry runs again
        await forget(ctx.database, claimed)
        return
    await remember(ctx.database, claimed, answer)


async def _send_stored(answer: StoredAnswer, send: Any) -> None:
    body = answer.body
    headers = [(name.encode("latin-1"), value.encode("latin-1"))
               for name, value in answer.headers]
    headers += [REPLAYED, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _send_error(request: Request[Any, Any, Any], exc: DocbaseError, scope: Scope,
                      receive: Any, send: Any) -> None:
    response = docbase_error(request, exc)
    await response.to_asgi_response(app=None, request=request)(scope, receive, send)

