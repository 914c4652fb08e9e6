"""Rate limits: per key, per client address, and failed credentials per address.

:class:`RateLimiter` (``Database.rate_limiter``) decides; the counters are fixed-window
documents in the system collection :data:`COUNTERS_COLLECTION`, shared by every process
(:mod:`.windows`). The HTTP layer asks it once per request, around authentication.
"""

from __future__ import annotations

from docbase.core.ratelimit.limiter import RateLimiter
from docbase.core.ratelimit.windows import COUNTERS_COLLECTION, Window, hit, peek

__all__ = ["COUNTERS_COLLECTION", "RateLimiter", "Window", "hit", "peek"]
