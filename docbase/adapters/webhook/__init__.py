"""The webhook transport: deliveries POSTed with ``httpx`` to the address core checked.

The composition root (``docbase/core/composition.py``) builds one
:class:`HttpxWebhookSender` for a process's webhook dispatcher. Install it with
``pip install 'docbase[server]'``.
"""

from __future__ import annotations

import importlib.util

from docbase.core.errors import MissingDependencyError

# found, not imported: httpx is imported on the first delivery (several MiB per process)
if importlib.util.find_spec("httpx") is None:  # pragma: no cover - only without the extra
    raise MissingDependencyError("httpx", extra="server")

from docbase.adapters.webhook.sender import HttpxWebhookSender

__all__ = ["HttpxWebhookSender"]
