"""The port contract suite, run against every backend through the ``store`` fixture."""

from docbase.testing.contract import BlobStoreContract, DocumentStoreContract


class TestDocumentStore(DocumentStoreContract):
    """Every DocumentStore method, on every backend in tests/backends.py."""


class TestBlobStore(BlobStoreContract):
    """Every BlobStore method, on every backend in tests/backends.py."""
