"""Hypothesis settings profiles: "ci" (thorough) and "dev" (quick), chosen by ``CI``.

Importing this module registers both and loads "ci" when ``CI=true``, else "dev".
``HYPOTHESIS_PROFILE`` names a profile explicitly and wins over ``CI``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    # a loaded machine (the suite's two workers and its servers) draws slowly: the
    # too_slow check then fails a test for the machine, not for its strategy
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or (
    "ci" if os.environ.get("CI", "").lower() == "true" else "dev"
)
settings.load_profile(PROFILE)
