"""Running behind a TLS-terminating proxy (``docbase serve --proxy-headers``).

The proxy speaks HTTPS to clients and plain HTTP to docbase, saying so with
``X-Forwarded-Proto: https``. That header is believed only from the configured proxy
addresses; any other request (a direct plain-HTTP client, or a proxy that forwarded
plain HTTP) gets ``403 HTTPSRequired``, so no credential or document ever crosses the
network in clear. ``GET /health`` and ``GET /health/ready`` answer regardless: they reveal nothing
and load balancers probe them directly.

A pure ASGI middleware, so it wraps the docbase app (or any other) unchanged.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

import msgspec

Scope = dict[str, Any]
Receive = Any
Send = Any
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_EXEMPT_PATHS = frozenset({"/health", "/health/ready"})
_VERDICTS = 1024


class ForwardedHttpsOnly:
    """Let through only requests a trusted proxy received over HTTPS.

    Such a request gets ``scope["scheme"] = "https"`` and, when the proxy sent
    ``X-Forwarded-For``, the client address the proxy saw.
    """

    def __init__(self, app: Any, trusted_proxies: Iterable[str]) -> None:
        self.app = app
        self.trusted: tuple[Network, ...] = tuple(
            ipaddress.ip_network(address, strict=False) for address in trusted_proxies
        )
        # parsing the peer's address on every request was 3% of a list read's time
        self._verdicts: dict[str, bool] = {}

    def is_trusted(self, address: str | None) -> bool:
        """Tell whether ``address`` belongs to a configured proxy."""
        if not address:
            return False
        known = self._verdicts.get(address)
        if known is None:
            if len(self._verdicts) >= _VERDICTS:  # addresses come from the network: bounded
                self._verdicts.clear()
            known = self._verdicts[address] = self._trusted(address)
        return known

    def _trusted(self, address: str) -> bool:
        return in_networks(address, self.trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` if a trusted proxy forwarded it from HTTPS, else refuse it."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        client = scope.get("client")
        peer = client[0] if client else None
        proto = headers.get(b"x-forwarded-proto", b"").split(b",")[-1].strip().lower()
        if self.is_trusted(peer) and proto == b"https":
            # in place: the request observer outside reads what the app adds to the scope
            scope["scheme"] = "https" if scope["type"] == "http" else "wss"
            forwarded_for = headers.get(b"x-forwarded-for")
            if forwarded_for:
                scope["client"] = (self._client(forwarded_for.decode("latin-1"), peer), 0)
            await self.app(scope, receive, send)
        elif scope["type"] == "http" and scope.get("path") in _EXEMPT_PATHS:
            await self.app(scope, receive, send)
        else:
            await _refuse(scope, send)

    def _client(self, forwarded_for: str, peer: str | None) -> str:
        hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
        for hop in reversed(hops):
            if not self.is_trusted(hop):
                return hop
        return hops[0] if hops else peer or ""


def in_networks(address: str, networks: Iterable[Network]) -> bool:
    """Tell whether ``address`` (IPv4, IPv6 or IPv4-mapped IPv6) is in one of ``networks``."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)


def _headers(scope: Scope) -> dict[bytes, bytes]:
    found: dict[bytes, bytes] = {}
    for raw_name, value in scope.get("headers", ()):
        name = raw_name.lower()
        found[name] = found[name] + b"," + value if name in found else value
    return found


async def _refuse(scope: Scope, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = msgspec.json.encode({
        "name": "HTTPSRequired",
        "message": "this server answers HTTPS only: send the request through its "
                   "TLS-terminating proxy",
        "status": 403,
    })
    await send({
        "type": "http.response.start",
        "status": 403,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    })
    await send({"type": "http.response.body", "body": body})
