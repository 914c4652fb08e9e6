"""The embeddable API: a :class:`Database` hands out collections and owns their pipeline.

A ``Database`` binds a document store, a blob store, limits and hooks, and assembles
the write and read pipelines (:mod:`docbase.core.pipeline`) that every
:class:`~docbase.core.collection.Collection` operation passes. The HTTP layer is a
thin translation of requests into these calls; ``docs/embedding.md`` shows them.

It is the top floor of core (``docs/architecture.md``, "Floors"): it builds its parts
in order, each from parts already finished, and nothing below it imports it. The
features declare what they need as protocols (:mod:`docbase.core.system_data`,
:class:`~docbase.core.collection_reads.CollectionServices`, ...), which a ``Database``
satisfies, so callers that hold one pass it as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import overload

from docbase.core.auth.cache import SystemCache
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.batch.unit import BatchUnit
from docbase.core.batch.unit import running as running_batch
from docbase.core.changes import ChangeFeed
from docbase.core.changes.demand import LogDemand, RealtimeSwitch
from docbase.core.changes.log import ChangeLog
from docbase.core.changes.readable import ReadableFeed
from docbase.core.collection import Collection
from docbase.core.collection_views import CollectionViews
from docbase.core.hooks import Hook, HookRegistry, JobRegistry
from docbase.core.hooks.calling import UserFunction
from docbase.core.hooks.user import UserHook
from docbase.core.ids import new_object_id
from docbase.core.lifecycle import AsyncResource
from docbase.core.mail.service import MailService, SmtpMailerFactory
from docbase.core.media import MEDIA_COLLECTION, Media
from docbase.core.names import check_collection_name, is_user_collection
from docbase.core.parents import ParentRef
from docbase.core.pipeline import Pipeline, Validator, read_stages, write_stages
from docbase.core.portability.capture import CaptureLeases
from docbase.core.ports import BlobStore, DocumentStore, Mailer
from docbase.core.ratelimit import RateLimiter
from docbase.core.reads import ReadRoad
from docbase.core.relations import Relations
from docbase.core.schema.enforcing import SchemaEnforcingStore
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.schema.validation import SchemaValidator
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits
from docbase.core.settings.limits import Limits
from docbase.core.settings.store import SettingsStore
from docbase.core.webhooks.stored_webhooks import WebhookRegistry


class Database(AsyncResource, ReadsLimits):
    """One database: collections on a document store, media on a blob store."""

    def __init__(
        self,
        store: DocumentStore,
        blobs: BlobStore | None = None,
        *,
        name: str = "docbase",
        limits: Limits | None = None,
        hooks: HookRegistry | None = None,
        mailer: Mailer | None = None,
        smtp_mailer: SmtpMailerFactory | None = None,
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.name = name
        self.limits_in_force = LimitsInForce(limits or Limits())
        """The server's limits, lowered by the database's stored ``limits.*``."""
        self.hooks = hooks or HookRegistry()
        self.jobs = JobRegistry()
        """Scheduled jobs (``@db.job``), run by a ``JobScheduler`` (``docbase serve`` has one)."""
        self.mailer = mailer
        self.auth_cache = SystemCache()
        """Bounded, short-lived lookups of system collections (keys; later users, tokens)."""
        self.rate_limiter = RateLimiter(store, self.limits_in_force, self.auth_cache)
        """Requests per key and per address, failed credentials per address."""
        self.settings = SettingsStore(store, self.auth_cache, self.limits_in_force)
        """The stored settings: mail, auth, realtime, limits, secrets (never served by HTTP)."""
        self.schemas = SchemaRegistry(store, self.auth_cache, self.settings)
        """The collections' schemas (``_schemas``) and the ``schema.mode`` setting."""
        self.documents = SchemaEnforcingStore(store, self.schemas)
        """``store`` as user collections see it: unique fields held, passwords withheld."""
        self.validators: list[Validator] = [SchemaValidator(self.schemas, store,
                                                            self.documents)]
        """Run by the validate stage of every write, in order (the schemas' first)."""
        self.relations = Relations(self.documents)
        log = ChangeLog(store, self.limits_in_force)
        self.webhooks = WebhookRegistry(store, self.limits_in_force, self.auth_cache, log)
        """The webhooks and their delivery state (:mod:`docbase.core.webhooks`)."""
        self.changes = ChangeFeed(log, self.limits_in_force, LogDemand(
            (RealtimeSwitch(self.settings), self.webhooks, CaptureLeases(store)),
            self.auth_cache))
        """Committed writes are published here and logged; ``db.changes(...)`` reads them
        back from every process (:mod:`docbase.core.changes`)."""
        self.pipeline = Pipeline(
            lambda staged: write_stages(
                staged, store=self.documents, relations=self.relations, hooks=self.hooks,
                validators=self.validators, changes=self.changes, limits=self.limits_in_force,
                schemas=self.schemas),
            read_stages(hooks=self.hooks, schemas=self.schemas, store=self.documents),
        )
        self.reads = ReadRoad(self.pipeline.read, self.documents, self.relations, self.schemas)
        """The read stages of the documents an answer embeds (children, lookups)."""
        self.views = CollectionViews(name, self.limits_in_force, self.documents, self.pipeline,
                                     self.reads, self.changes)
        """What collections act through; hands out the collection handles."""
        self.mail = MailService(self.views, self.settings, mailer=mailer, smtp=smtp_mailer)
        """``POST /mail``: the outbound log and the transport of the stored settings."""
        self.media = Media(self.views, store, blobs, self.settings, self.auth_cache)
        """``/media``: uploads, content and derivatives on the blob store, metadata in _media."""

    async def open(self) -> None:
        """Open the underlying stores."""
        await self.store.open()

    async def close(self) -> None:
        """Stop reading the change log; close the underlying stores."""
        await self.changes.close()
        await self.store.close()

    def collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of the user collection ``name`` acting as ``principal``."""
        return self.views.collection(name, principal)

    def system_collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of a reserved system collection (keys, tokens, outbound mail, ...)."""
        return self.views.system_collection(name, principal)

    def batch(self, *, atomic: bool = True) -> AbstractAsyncContextManager[BatchUnit]:
        """``async with db.batch() as batch:``: the writes of the block, all or nothing.

        Every write of the block (through any collection, as any principal) passes the
        pipeline as it would alone, inside one transaction of the store; a block that
        raises stores nothing and publishes nothing, and one that ends commits them all
        and only then publishes their change events, each carrying ``batch.batch_id``.
        Values the block reads back (a created ``_id``) are its references. With
        ``atomic=False`` each write commits on its own and only the id is shared
        (``docs/batch.md``).

        Raises:
            TransactionsUnsupported: ``atomic`` on a store without transactions (MongoDB).

        """
        return running_batch(self.store, new_object_id(), atomic=atomic)

    def changes_for(self, principal: Principal, *, origin: str | None = None) -> ReadableFeed:
        """``db.changes`` as ``principal`` may see it: the rule of ``GET /realtime``.

        ``async for change in db.changes_for(principal)(collection, since=seq)``; see
        :mod:`docbase.core.changes.readable`. ``db.changes`` itself is for system code.
        """
        return self.views.changes_for(principal, origin=origin)

    @overload
    def hook(self, collection: str, point: Hook, /) -> Callable[[UserFunction], UserFunction]:
        ...

    @overload
    def hook(self, point: Hook, /) -> Callable[[UserFunction], UserFunction]:
        ...

    def hook(self, first: str | Hook, point: Hook | None = None, /,
             ) -> Callable[[UserFunction], UserFunction]:
        """Decorate a function to run at ``point``: ``@db.hook("orders", Hook.BEFORE_POST)``.

        Without a collection (``@db.hook(Hook.AFTER_DELETE)``) it runs for every user
        collection and ``_media``. The function takes a ``ReadContext`` (``beforeGET``) or a
        ``WriteContext``; ``docs/hooks.md`` describes both. Of the system collections
        only ``_media`` takes hooks: its writes are uploads and deletes of media files
        (``docs/media.md``).

        Raises:
            ValueError: ``point`` is not a :class:`~docbase.core.hooks.Hook`.
            InvalidQuery: ``collection`` is neither a user collection nor ``_media``.

        """
        if point is None:
            collection, point = None, Hook(first)
        elif first == MEDIA_COLLECTION:
            collection, point = MEDIA_COLLECTION, Hook(point)
        else:
            collection, point = check_collection_name(str(first)), Hook(point)

        def register(function: UserFunction) -> UserFunction:
            self.hooks.on(point.point, UserHook(self, point, function), collection=collection,
                          methods=[point.method])
            return function
        return register

    def job(self, schedule: str, *, name: str | None = None,
            ) -> Callable[[UserFunction], UserFunction]:
        """Decorate a function to run on a cron ``schedule``: ``@db.job("*/5 * * * *")``.

        It takes a ``JobContext``. ``name`` (default ``module.function``) identifies it
        across processes: each tick runs once among all processes sharing the storage.

        Raises:
            ConfigurationError: the schedule is invalid or the name taken (when decorating).

        """
        return self.jobs.decorator(schedule, name=name)

    async def collections(self) -> list[str]:
        """The user collections holding documents, sorted."""
        return [c for c in await self.store.collections() if is_user_collection(c)]

    async def child_fields(self, collection: str) -> list[str]:
        """The child fields (subcollections) recorded for a parent collection."""
        return await self.relations.child_fields(collection)


__all__ = ["Collection", "Database", "ParentRef", "check_collection_name"]
