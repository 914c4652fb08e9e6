"""The remote client: a docbase server used through the embedded API's calls.

``await docbase.connect("https://host:8443", apikey=...)`` returns a
:class:`RemoteDatabase` (``docs/client.md``). It speaks HTTPS with httpx and imports
no web framework.
"""

from __future__ import annotations

from importlib.util import find_spec

from docbase.core.errors import MissingDependencyError

if find_spec("httpx") is None:  # pragma: no cover - installed without the extra
    raise MissingDependencyError("httpx", "client")

from docbase.client.changes import RemoteChange
from docbase.client.collection import RemoteCollection
from docbase.client.database import RemoteDatabase, connect_remote
from docbase.client.transport import Retries

__all__ = ["RemoteChange", "RemoteCollection", "RemoteDatabase", "Retries", "connect_remote"]
