"""Headers every response of ``docbase serve`` carries, whatever answered it.

- ``Strict-Transport-Security``: the service is HTTPS only (``docs/security.md``), so a
  browser that saw it once never tries plain HTTP for a year.
- ``X-Content-Type-Options: nosniff``: a browser takes each body for its declared type
  (JSON stays JSON, a stored media file is not run as a script).
- ``Server: docbase``: no server product or version to look up vulnerabilities for;
  the HTTP server would otherwise name itself.

A pure ASGI middleware, outermost in :func:`docbase.http.worker.build_app`, so error
answers (and the proxy check's 403) carry the headers too.
"""

from __future__ import annotations

from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]

HSTS_MAX_AGE = 31_536_000
"""One year, in seconds: what HSTS preload lists ask for."""

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"strict-transport-security", f"max-age={HSTS_MAX_AGE}".encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"server", b"docbase"),
)
_NAMES = frozenset(name for name, _ in SECURITY_HEADERS)


class SecurityHeaders:
    """Add :data:`SECURITY_HEADERS` to every HTTP response of ``app`` (replacing any)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Serve ``scope``, adding the headers when the response starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(name, value) for name, value in message.get("headers", ())
                        if name.lower() not in _NAMES]
                message = {**message, "headers": [*kept, *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
