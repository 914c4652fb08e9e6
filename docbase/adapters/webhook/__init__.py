"""The webhook transport: deliveries POSTed with ``httpx`` to the address core checked.

The composition root (``docbase/core/composition.py``) builds one
:class:`HttpxWebhookSender` for a process's webhook dispatcher. Install it with
``pip install 'docbase[server]'``.
"""

from __future__ import annotations

from docbase.core.errors import MissingDependencyError

try:
    import httpx  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("httpx", extra="server") from exc

from docbase.adapters.webhook.sender import HttpxWebhookSender

__all__ = ["HttpxWebhookSender"]
