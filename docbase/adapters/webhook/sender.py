"""A :class:`~docbase.core.ports.WebhookSender` on httpx.

The request goes to the IP address core resolved and checked, never to a fresh
resolution of the host name: the URL's host is sent as ``Host`` and, over HTTPS, as the
TLS server name (so the certificate is verified for it). Redirects are not followed
(one could point at a private address); proxies from the environment are not used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from docbase.core.errors import WebhookDeliveryError
from docbase.core.plugins import lazy_module
from docbase.core.ports import WebhookRequest

if TYPE_CHECKING:
    import httpx
else:  # imported on the first delivery: a process may never deliver one
    httpx = lazy_module("httpx")


class HttpxWebhookSender:
    """One connection pool for every delivery of a process."""

    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None

    async def post(self, request: WebhookRequest) -> int:
        """POST the delivery to its checked address; return the status."""
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        parts = urlsplit(request.url)
        host = parts.hostname or ""
        address = f"[{request.address}]" if ":" in request.address else request.address
        netloc = address if parts.port is None else f"{address}:{parts.port}"
        pinned = urlunsplit(parts._replace(netloc=netloc))
        headers = {**dict(request.headers), "host": parts.netloc.rpartition("@")[2]}
        extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
        try:
            response = await self._client.post(pinned, content=request.body, headers=headers,
                                               extensions=extensions, timeout=request.timeout)
        except httpx.HTTPError as exc:
            raise WebhookDeliveryError(f"{request.url}: {type(exc).__name__}: {exc}") from exc
        return response.status_code

    async def close(self) -> None:
        """Close the connection pool."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
