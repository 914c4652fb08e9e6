"""Webhooks: changes of the durable log POSTed to other services, signed, retried.

:mod:`.registry` keeps them in ``_webhooks``; :mod:`.dispatcher` delivers them;
:mod:`.delivery` shapes and signs a delivery; :mod:`.targets` refuses non-public
addresses.
"""

from __future__ import annotations

from docbase.core.webhooks.delivery import verify_signature
from docbase.core.webhooks.stored_webhooks import WEBHOOKS_COLLECTION, Webhook, WebhookRegistry

__all__ = ["WEBHOOKS_COLLECTION", "Webhook", "WebhookRegistry", "verify_signature"]
