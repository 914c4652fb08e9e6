"""One pooled HTTPS client per remote database: credentials, timeouts, retries, errors.

Every request of a :class:`~docbase.client.database.RemoteDatabase` goes through
:meth:`Transport.request`. A request whose connection fails (refused, reset, timed out)
is sent again after a growing pause: a read always, and a write the server deduplicates
(``keyed``: the document writes of ``/rest`` and ``POST /batch``) too, unless
``retry_writes`` is off. Such a write carries one ``Idempotency-Key`` for all its
attempts, so a retry answers what the first try answered and applies nothing again; one
answered ``409 IdempotencyKeyInUse`` (its first try is still running) is sent again the
same way. Other writes (media, mail, operator calls) are sent once.
An error answer raises the exception the embedded library raises
(:mod:`docbase.client.errors`).
"""

from __future__ import annotations

import asyncio
import ssl
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec

from docbase.client.errors import error_from_answer
from docbase.core.errors import BackendError, IdempotencyKeyInUse

__all__ = ["READS", "Retries", "Transport"]

READS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: sent again after a connection failure."""

_AGAIN = (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError,
          httpx.ReadError, httpx.WriteError)
"""Failures after which a request that may be sent again is: the connection failed or
timed out. Any other transport failure raises :class:`BackendError` at once; of the
error answers only ``409 IdempotencyKeyInUse`` is tried again."""


@dataclass(frozen=True)
class Retries:
    """How often, and after which pauses, a request is sent again after a connection failure."""

    attempts: int = 3
    """Attempts in all (1: never again)."""
    backoff: float = 0.1
    """The first pause in seconds; each next one doubles."""
    retry_writes: bool = True
    """Send writes again too: each carries one ``Idempotency-Key`` for all its attempts,
    which the server honours (a retry replays the first answer, applying nothing)."""


def tls_verify(verify: bool | str | Path | ssl.SSLContext) -> bool | ssl.SSLContext:
    """``verify`` as httpx takes it: a CA file (the server's self-signed cert.pem) read once."""
    if isinstance(verify, str | Path):
        return ssl.create_default_context(cafile=str(verify))
    return verify


class Transport:
    """An ``httpx.AsyncClient`` on one database's base URL, with its credential."""

    def __init__(self, base_url: str, *, apikey: str | None = None, jwt: str | None = None,
                 verify: bool | str | Path | ssl.SSLContext = True,
                 timeout: float = 30.0, retries: Retries | None = None,
                 ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries or Retries()
        self.verify = tls_verify(verify)
        self.timeout = timeout
        self.headers: dict[str, str] = {}
        self.set_credential(apikey=apikey, jwt=jwt)
        self.client = httpx.AsyncClient(base_url=self.base_url, verify=self.verify,
                                        timeout=timeout)

    def set_credential(self, *, apikey: str | None = None, jwt: str | None = None) -> None:
        """Send ``apikey`` (``x-apikey``) or ``jwt`` (``Authorization: Bearer``) from now on."""
        self.headers.pop("x-apikey", None)
        self.headers.pop("authorization", None)
        if apikey is not None:
            self.headers["x-apikey"] = apikey
        if jwt is not None:
            self.headers["authorization"] = f"Bearer {jwt}"

    async def close(self) -> None:
        """Close the pooled connections."""
        await self.client.aclose()

    async def send(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                   json: Any = None, content: bytes | None = None,
                   headers: Mapping[str, str] | None = None,
                   files: Any = None, keyed: bool = False) -> httpx.Response:
        """Send one request (again after connection failures, where that is safe).

        ``keyed``: a write of a route that honours ``Idempotency-Key``; it carries a
        fresh key (unless ``headers`` hold one), the same on every attempt.

        Raises:
            DocbaseError: the class of the server's error answer.
            BackendError: the server could not be reached, after the retries.

        """
        all_headers = {**self.headers, **(headers or {})}
        if keyed:
            all_headers.setdefault("idempotency-key", uuid.uuid4().hex)
        if json is not None:
            content = msgspec.json.encode(json)
            all_headers["content-type"] = "application/json"
        request = self.client.build_request(method, path, params=params, content=content,
                                            headers=all_headers, files=files)
        again = method in READS or (keyed and self.retries.retry_writes)
        attempts = self.retries.attempts if again else 1
        for attempt in range(attempts):
            last = attempt + 1 >= attempts
            try:
                response = await self.client.send(request)
            except httpx.TransportError as exc:  # timeouts included
                if last or not isinstance(exc, _AGAIN):
                    raise BackendError(f"cannot reach {self.base_url}: {exc!r}") from exc
            else:
                if response.status_code < 400:
                    return response
                error = error_from_answer(response.status_code, response.content,
                                          response.headers)
                if last or not isinstance(error, IdempotencyKeyInUse):
                    raise error
            await asyncio.sleep(self.retries.backoff * 2 ** attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def request(self, method: str, path: str, **options: Any) -> Any:
        """Send one request and return its decoded JSON body (see :meth:`send`)."""
        response = await self.send(method, path, **options)
        return msgspec.json.decode(response.content) if response.content else None
