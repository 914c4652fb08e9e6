"""The hook names a user registers with: ``beforeGET`` ... ``afterDELETE``.

Each :class:`Hook` stands for one :class:`~docbase.core.hooks.pipeline_points.HookPoint` of
the pipelines and the HTTP verb it is limited to, so ``beforePUT`` and ``beforePATCH``
are both the before-update point, told apart by the write's ``method``.
"""

from __future__ import annotations

import enum

from docbase.core.hooks.pipeline_points import HookPoint


class Hook(enum.StrEnum):
    """Where a user's hook runs, named as in the REST API (``docs/hooks.md``)."""

    BEFORE_GET = "beforeGET"
    BEFORE_POST = "beforePOST"
    AFTER_POST = "afterPOST"
    BEFORE_PUT = "beforePUT"
    AFTER_PUT = "afterPUT"
    BEFORE_PATCH = "beforePATCH"
    AFTER_PATCH = "afterPATCH"
    BEFORE_DELETE = "beforeDELETE"
    AFTER_DELETE = "afterDELETE"

    @property
    def method(self) -> str:
        """The HTTP verb this hook is limited to (``GET`` for ``beforeGET``)."""
        return self.value.removeprefix("before").removeprefix("after")

    @property
    def after(self) -> bool:
        """Tell whether this hook runs after the write is stored."""
        return self.value.startswith("after")

    @property
    def point(self) -> HookPoint:
        """The pipeline's hook point this hook runs at."""
        return _POINTS[self.method][self.after]


_POINTS: dict[str, tuple[HookPoint, HookPoint]] = {
    "GET": (HookPoint.BEFORE_READ, HookPoint.BEFORE_READ),
    "POST": (HookPoint.BEFORE_INSERT, HookPoint.AFTER_INSERT),
    "PUT": (HookPoint.BEFORE_UPDATE, HookPoint.AFTER_UPDATE),
    "PATCH": (HookPoint.BEFORE_UPDATE, HookPoint.AFTER_UPDATE),
    "DELETE": (HookPoint.BEFORE_DELETE, HookPoint.AFTER_DELETE),
}
