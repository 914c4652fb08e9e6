"""The embeddable API: a :class:`Database` hands out collections and owns their pipeline.

A ``Database`` binds a document store, a blob store, limits and hooks, and assembles
the write and read pipelines (:mod:`docbase.core.pipeline`) that every
:class:`~docbase.core.collection.Collection` operation passes. The HTTP layer is a
thin translation of requests into these calls; ``docs/embedding.md`` shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

from docbase.core.auth.cache import SystemCache
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.changes import ChangeBus
from docbase.core.collection import Collection
from docbase.core.events import Operation, WriteEvent
from docbase.core.hooks import Hook, HookRegistry, JobRegistry
from docbase.core.hooks.calling import UserFunction
from docbase.core.hooks.user import UserHook
from docbase.core.lifecycle import AsyncResource
from docbase.core.mail.service import MailService, SmtpMailerFactory
from docbase.core.media import Media
from docbase.core.names import check_collection_name, is_user_collection
from docbase.core.pipeline import Pipeline, Validator, read_stages, write_stages
from docbase.core.ports import BlobStore, DocumentStore, Mailer
from docbase.core.relations import ParentRef, Relations, children_of
from docbase.core.settings.limits import Limits
from docbase.core.settings.store import SettingsStore


class Database(AsyncResource):
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
        self.limits = limits or Limits()
        self.hooks = hooks or HookRegistry()
        self.jobs = JobRegistry()
        """Scheduled jobs (``@db.job``), run by a ``JobScheduler`` (``docbase serve`` has one)."""
        self.mailer = mailer
        self.changes = ChangeBus()
        """Committed writes are published here (:mod:`docbase.core.changes`)."""
        self.validators: list[Validator] = []
        """Run by the validate stage of every write, in order."""
        self.relations = Relations(store)
        self.auth_cache = SystemCache()
        """Bounded, short-lived lookups of system collections (keys; later users, tokens)."""
        self.settings = SettingsStore(store, self.auth_cache)
        """The stored settings: mail, auth, realtime and secrets (never served by HTTP)."""
        self.mail = MailService(self, smtp_mailer)
        """``POST /mail``: the outbound log and the transport of the stored settings."""
        self.media = Media(self)
        """``/media``: uploads, content and derivatives on the blob store, metadata in _media."""
        self.pipeline = Pipeline(
            write_stages(store=store, relations=self.relations, cascade=self._cascade,
                         hooks=self.hooks, validators=self.validators, changes=self.changes),
            read_stages(hooks=self.hooks),
        )

    async def open(self) -> None:
        """Open the underlying stores."""
        await self.store.open()

    async def close(self) -> None:
        """Close the underlying stores."""
        await self.store.close()

    def collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of the user collection ``name`` acting as ``principal``."""
        return Collection(self, check_collection_name(name), principal)

    def system_collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of a reserved system collection (keys, tokens, outbound mail, ...)."""
        return Collection(self, name, principal)

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
        collection. The function takes a ``ReadContext`` (``beforeGET``) or a
        ``WriteContext``; ``docs/hooks.md`` describes both.

        Raises:
            ValueError: ``point`` is not a :class:`~docbase.core.hooks.Hook`.

        """
        if point is None:
            collection, point = None, Hook(first)
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

    async def _cascade(self, write: WriteEvent, ids: Sequence[str]) -> None:
        """Delete the children of ``ids``, each child collection one write of the pipeline."""
        if not ids:
            return
        for field in await self.relations.child_fields(write.collection):
            await self.pipeline.write(WriteEvent(
                field, write.principal, Operation.DELETE, "DELETE",
                filter=children_of(write.collection, ids),
                cause=f"cascade from {write.collection}",
            ))


__all__ = ["Collection", "Database", "ParentRef", "check_collection_name"]
