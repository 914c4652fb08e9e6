"""Where a webhook may point: no server-side request forgery.

A webhook URL is ``http`` or ``https`` with a host name or address. Its host is
resolved when the webhook is added and again before every delivery, and every address
it resolves to must be public: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7),
link-local (169.254/16 with the cloud metadata services, fe80::/10), carrier-grade NAT,
multicast, reserved and unspecified addresses are refused, IPv4-mapped IPv6 addresses
judged as the IPv4 address they carry. The delivery then connects to the address that
was checked (:class:`~docbase.core.ports.WebhookRequest`), so a name that resolves
differently a moment later (DNS rebinding) cannot reach an internal service.

The operator may allow non-public addresses for one database with the limit
``webhook_private_targets`` (e.g. a receiver on the same host).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from docbase.core.errors import InvalidQuery, WebhookDeliveryError


def check_url(url: object) -> str:
    """Return ``url`` if it is an ``http(s)`` URL with a host and no credentials in it.

    Raises:
        InvalidQuery: it is not.

    """
    if not isinstance(url, str):
        raise InvalidQuery("a webhook URL must be a string")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as exc:
        raise InvalidQuery(f"webhook URL {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidQuery(f"webhook URL {url!r} must be http:// or https:// with a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidQuery(f"webhook URL {url!r} must not carry a user name or password")
    return url


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix: its last 32 bits are the IPv4 address reached."""
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
"""Local-use NAT64 prefixes (RFC 8215): translated inside the operator's own network."""
_COMPATIBLE = ipaddress.ip_network("::/96")
"""Deprecated IPv4-compatible addresses (``::a.b.c.d``)."""


def is_public(address: str) -> bool:
    """Tell whether an IP address is a public unicast address.

    An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``,
    IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``) is
    judged by that IPv4 address, since a translator or relay delivers to it:
    ``64:ff9b::a9fe:a9fe`` is 169.254.169.254. Local-use NAT64 (``64:ff9b:1::/48``)
    is never public.
    """
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
        address.partition("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return False
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None:
            ip = ip.sixtofour
        elif ip in _NAT64 or ip in _COMPATIBLE:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.is_global and not ip.is_multicast


async def resolve_target(url: str, *, allow_private: bool) -> str:
    """Resolve the host of ``url`` and return the address to connect to.

    Raises:
        InvalidQuery: the host resolves to a non-public address (the message names it)
            while ``allow_private`` is off.
        WebhookDeliveryError: the host cannot be resolved.

    """
    parts = urlsplit(check_url(url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            parts.hostname, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise WebhookDeliveryError(f"cannot resolve {parts.hostname!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise WebhookDeliveryError(f"{parts.hostname!r} has no address")
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise InvalidQuery(
                    f"webhook URL {url!r} reaches the non-public address {address}; "
                    "the operator may allow such targets with the limit "
                    "webhook_private_targets")
    return addresses[0]
