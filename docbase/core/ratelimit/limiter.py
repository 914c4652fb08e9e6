"""Rate limits of one database: requests per key and per address, failed credentials.

Three limits, each counted in fixed windows of ``limits.rate_window`` seconds shared by
every process (:mod:`.windows`), each answered with ``TooManyRequests`` (429 with
``Retry-After``, the seconds left in the window):

- ``limits.rate_per_key``: requests one API key (or one token's user) may make per
  window; 0, the default, is no limit.
- ``limits.rate_per_address``: requests one client address may make per window; 0, the
  default, is no limit.
- ``limits.max_failed_credentials``: unknown, expired or revoked keys and refused
  tokens one address may present per window (default 30); past it every request from
  that address is refused before its credential is even looked at, so guessing keys
  is slowed to that many guesses per window, whichever worker answers.

Full-access principals are exempt from the first two unless ``limits.rate_full_access``
is set. Each counted request costs one atomic store update, and only when a limit
applies to it; the failed-credential check reads the address's count at most once a
second per process (the database's :class:`~docbase.core.auth.cache.SystemCache`), and
a failure updates it at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docbase.core.auth.cache import Namespace, SystemCache
from docbase.core.errors import TooManyRequests
from docbase.core.metrics import instruments
from docbase.core.ratelimit.windows import Window, hit, peek
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits

if TYPE_CHECKING:
    from docbase.core.auth.principal import Principal
    from docbase.core.ports import DocumentStore

_FAILURES: Namespace[Window] = Namespace("failed_credentials")
_TOO_MANY_FAILURES = "too many failed credentials from this address"


class RateLimiter(ReadsLimits):
    """Counts and refuses requests of one database as its :class:`Limits` say."""

    def __init__(self, store: DocumentStore, limits: LimitsInForce, cache: SystemCache,
                 ) -> None:
        self.store = store
        self.limits_in_force = limits
        self.cache = cache

    async def check_address(self, address: str | None) -> None:
        """Refuse ``address`` while it has failed too many credentials this window.

        Raises:
            TooManyRequests: ``max_failed_credentials`` reached in the current window.

        """
        if address is None:
            return
        known = self.cache.get(_FAILURES, address)
        if known is None or known.over:
            if known is not None:
                self.cache.invalidate(_FAILURES, address)
            known = await self.cache.fetch(_FAILURES, address, lambda: peek(
                self.store, "failed", address, self.limits.rate_window))
        if known.hits >= self.limits.max_failed_credentials:
            raise _refused("failed_credentials", _TOO_MANY_FAILURES, known)

    async def credential_failed(self, address: str | None) -> None:
        """Count a refused credential from ``address``.

        Raises:
            TooManyRequests: this failure went past ``max_failed_credentials``.

        """
        if address is None:
            return
        counted = await hit(self.store, "failed", address, self.limits.rate_window)
        self.cache.put(_FAILURES, address, counted)
        if counted.hits > self.limits.max_failed_credentials:
            raise _refused("failed_credentials", _TOO_MANY_FAILURES, counted)

    async def admit(self, principal: Principal, address: str | None) -> None:
        """Count an authenticated request against the per-key and per-address limits.

        Raises:
            TooManyRequests: the key or the address is over its limit this window.

        """
        limits = self.limits
        if principal.full_access and not limits.rate_full_access:
            return
        if limits.rate_per_key:
            subject = principal.key_id or f"user:{principal.author}"
            counted = await hit(self.store, "key", subject, limits.rate_window)
            if counted.hits > limits.rate_per_key:
                raise _refused("key", "too many requests with this credential", counted)
        if limits.rate_per_address and address is not None:
            counted = await hit(self.store, "address", address, limits.rate_window)
            if counted.hits > limits.rate_per_address:
                raise _refused("address", "too many requests from this address", counted)


def _refused(limit: str, what: str, window: Window) -> TooManyRequests:
    instruments().rate_limited(limit)
    wait = window.retry_after
    return TooManyRequests(f"{what}; try again in {wait} s", retry_after=wait)
