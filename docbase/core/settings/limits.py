"""Typed limits and settings of a database, validated when built."""

from __future__ import annotations

import msgspec

from docbase.core.errors import ConfigurationError

_ZERO_MEANS_OFF = frozenset({"rate_per_key", "rate_per_address", "export_max"})

DATABASE_LIMITS = (
    "max_page", "max_bulk", "max_body_bytes", "max_query_depth", "max_body_depth", "max_mail",
    "batch", "rate_per_key", "rate_per_address", "max_failed_credentials", "hook_timeout",
    "job_timeout", "max_upload_file_bytes", "max_upload_bytes", "max_upload_files",
    "max_image_pixels", "image_timeout", "export_max", "webhook_timeout",
    "webhook_max_failures", "change_retention", "change_max_entries",
)
"""The limits one database may lower with its stored settings (``limits.*``).

Each is a ceiling read when it is used, so a lower value is stricter and takes effect
at once. The others stay the server's: a store's timeout and automatic indexes are set
when the store opens, the change log's polling is the process's, the rate window
changes what every count means, and webhooks to private addresses are the server
operator's decision alone (``docs/security.md``).
"""

DEFAULT_QUERY_TIMEOUT = 10.0
"""Seconds one store operation may run, unless ``limits.query_timeout`` says otherwise."""


class AutoIndexing(msgspec.Struct, frozen=True):
    """When a SQL store indexes a path by itself (``Limits.auto_index_*``)."""

    queries: int = 20
    window: float = 300.0
    max_documents: int = 100_000


class Limits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Per-database limits; every one of them gives a clear error when exceeded."""

    max_page: int = 10_000
    """Largest ``max``/``$max`` a list read may ask for (400 above it)."""
    max_bulk: int = 1_000
    """Most documents one bulk insert may carry (413 above it)."""
    max_body_bytes: int = 10 * 1024 * 1024
    """Largest request body the HTTP layer accepts (413 above it)."""
    max_query_depth: int = 32
    """Deepest nesting of a ``q`` object."""
    max_body_depth: int = 64
    """Deepest nesting of a JSON request body (400 above it), checked before anything
    reads the body; MongoDB stores documents at most 100 levels deep."""
    query_timeout: float = DEFAULT_QUERY_TIMEOUT
    """Seconds one store operation of a request may run before it is refused (400
    ``QueryTimeout``): PostgreSQL's ``statement_timeout``, every MongoDB operation (on
    the client, and as ``maxTimeMS``), and on SQLite and memory every statement and all
    ``$regex`` matching of one operation together (``docs/reliability.md``). A write
    waits half of it for a lock another transaction holds, then answers 503."""
    hook_timeout: float = 10.0
    """Seconds a server-side hook may take before its request answers 504."""
    job_timeout: float = 300.0
    """Seconds a scheduled job may take before it is cancelled and logged as timed out."""
    max_mail: int = 1_000
    """Most messages one ``POST /mail`` may carry (413 above it)."""
    batch: int = 100
    """Most requests one ``POST /batch`` may carry (413 above it; ``docs/batch.md``)."""
    rate_window: float = 60.0
    """Seconds of one rate-limit window (``docs/security.md``)."""
    rate_per_key: int = 0
    """Requests one API key or token user may make per window (429 above it); 0: none."""
    rate_per_address: int = 0
    """Requests one client address may make per window (429 above it); 0: none."""
    rate_full_access: bool = False
    """Whether full-access keys count against the two rate limits above."""
    max_failed_credentials: int = 30
    """Refused keys or tokens one address may present per window; past it, every
    request from the address answers 429 until the window ends."""
    realtime_ping_interval: float = 10.0
    """Seconds between two ``ping`` events of a ``GET /realtime`` stream."""
    change_poll_interval: float = 0.25
    """Seconds between two reads of the change log by one process (``docs/realtime.md``);
    on PostgreSQL a notification wakes readers sooner."""
    change_gap_grace: float = 10.0
    """Seconds readers wait for a change whose sequence number was taken but whose entry
    is not stored yet, before skipping it (its writer failed or died)."""
    change_retention: float = 7 * 86_400.0
    """Seconds a change-log entry is kept: resuming (``Last-Event-ID``) works within it."""
    change_max_entries: int = 100_000
    """Most entries the change log keeps; the oldest are pruned beyond it."""
    webhook_timeout: float = 10.0
    """Seconds a webhook receiver has to answer one delivery."""
    webhook_retry_delay: float = 1.0
    """Seconds before the first retry of a failed delivery; doubled after each further
    failure, up to five minutes."""
    webhook_max_failures: int = 10
    """Failed deliveries in a row after which a webhook is disabled."""
    webhook_private_targets: bool = False
    """Allow webhook URLs on loopback, private, link-local and other non-public
    addresses (off: no server-side request forgery through a webhook)."""
    max_upload_file_bytes: int = 256 * 1024 * 1024
    """Largest file of a ``POST /media`` upload (413 naming the file above it)."""
    max_upload_bytes: int = 1024 * 1024 * 1024
    """Largest ``POST /media`` request: all its files together (413 above it)."""
    max_upload_files: int = 100
    """Most files one ``POST /media`` may carry (413 above it)."""
    max_image_pixels: int = 80_000_000
    """Most pixels (width times height) an uploaded image may have (422 above it)."""
    image_timeout: float = 30.0
    """Seconds reading an image or making one derivative may take (422 beyond it)."""
    export_max: int = 0
    """Most documents one NDJSON or CSV list read streams (``GET /rest/<c>`` with
    ``Accept: application/x-ndjson`` or ``text/csv``); 0: no limit."""

    auto_index: bool = True
    """Let a SQL store (SQLite, PostgreSQL) index a path by itself once sorted or
    filtered queries with a limit keep running on it without an index
    (``docs/sql-adapter.md``, "Automatic indexes"); off: only ``index: true`` fields and
    ``ensure_index`` make indexes."""
    auto_index_queries: int = 20
    """Unindexed queries on one path of a collection, within ``auto_index_window``, after
    which the path is indexed automatically (counted per process)."""
    auto_index_window: float = 300.0
    """Seconds within which ``auto_index_queries`` must come for an index to be made."""
    auto_index_max_documents: int = 100_000
    """Largest collection indexed automatically: building an index holds SQLite's write
    lock (PostgreSQL's: the table's writes) meanwhile; above it the log says to declare
    ``index: true``."""

    def auto_indexing(self) -> AutoIndexing | None:
        """The automatic-index policy these limits set; ``None`` when it is off."""
        if not self.auto_index:
            return None
        return AutoIndexing(queries=self.auto_index_queries, window=self.auto_index_window,
                            max_documents=self.auto_index_max_documents)

    def __post_init__(self) -> None:
        for field in self.__struct_fields__:
            value = getattr(self, field)
            if isinstance(value, bool) or (value == 0 and field in _ZERO_MEANS_OFF):
                continue
            if value <= 0:
                kind = "number" if isinstance(value, float) else "integer"
                raise ConfigurationError(f"limits.{field} must be a positive {kind}")


def _bound(name: str, value: float) -> float:
    """``value`` as a ceiling: 0 of a limit that 0 turns off is no ceiling."""
    return float("inf") if value == 0 and name in _ZERO_MEANS_OFF else value


def lowered(server: Limits, stored: dict[str, float]) -> Limits:
    """``server``'s limits with each of ``stored`` that is stricter (lower) in its place."""
    stricter = {name: value for name, value in stored.items()
                if _bound(name, value) < _bound(name, getattr(server, name))}
    return msgspec.structs.replace(server, **stricter) if stricter else server


def check_lowered(server: Limits, stored: dict[str, float]) -> None:
    """Refuse a stored limit above the server's: a database may only lower its limits.

    Raises:
        ConfigurationError: one of ``stored`` is above the server's (named, with both).

    """
    for name, value in stored.items():
        if _bound(name, value) > _bound(name, getattr(server, name)):
            shown = "0 (none)" if _bound(name, value) == float("inf") else f"{value:g}"
            raise ConfigurationError(
                f"setting 'limits.{name}': {shown} is above this server's limit "
                f"({getattr(server, name):g}); a database may only lower its limits")
