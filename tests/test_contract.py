"""The port contract suite, run against every backend through the ``store`` fixture."""

from typing import Any

import pytest

from docbase.adapters.memory import OutboxMailer
from docbase.testing.contract import BlobStoreContract, DocumentStoreContract, MailerContract


class TestDocumentStore(DocumentStoreContract):
    """Every DocumentStore method, on every backend in tests/backends.py."""


class TestBlobStore(BlobStoreContract):
    """Every BlobStore method, on every backend in tests/backends.py."""


class TestOutboxMailer(MailerContract):
    """The capture-only outbox keeps the Mailer contract."""

    @pytest.fixture
    def mailer(self) -> OutboxMailer:
        return OutboxMailer()

    @pytest.fixture
    def delivered(self, mailer: OutboxMailer) -> Any:
        async def received() -> list[dict[str, Any]]:
            return [{"to": list(m.to), "subject": m.subject} for _, m in mailer.sent]

        return received
