"""A user's hook as the pipelines run it: context in, changes back, limits enforced.

:class:`UserHook` is what ``@db.hook(...)`` registers at the pipeline's hook point.
It builds the hook's typed context (:mod:`docbase.core.hooks.context`) from the event
in flight, calls the function within ``limits.hook_timeout``
(:mod:`docbase.core.hooks.calling`) and hands what a before-hook changed back to the
event. A before-hook's error stops the operation: nothing is written. An after-hook
runs after the commit: its failure is logged and recorded in the hook log
(:mod:`docbase.core.hooks.calling`) and the write stands.
"""

from __future__ import annotations

from typing import Any

from docbase.core.documents import new_document
from docbase.core.errors import DocbaseError, InvalidQuery
from docbase.core.events import DeleteWhere, ReadEvent, UpdateDocument, WriteEvent
from docbase.core.hooks.calling import (
    UserFunction,
    call_within,
    describe,
    function_name,
    logger,
    record,
)
from docbase.core.hooks.context import HookHost, PrivilegedDatabase, ReadContext, WriteContext
from docbase.core.hooks.points import Hook
from docbase.core.ids import utc_now
from docbase.core.update import parse_update


class UserHook:
    """One registered user function at one :class:`Hook`."""

    def __init__(self, database: HookHost, hook: Hook, function: UserFunction) -> None:
        self.database = database
        self.hook = hook
        self.function = function
        self.name = f"{hook.value} hook {function_name(function)}"

    async def __call__(self, event: Any) -> None:
        """Run the function for ``event``; apply a before-hook's changes to it.

        Raises:
            DocbaseError: a before-hook refused the operation, failed or timed out.

        """
        if isinstance(event, ReadEvent):
            await self._read(event)
        elif self.hook.after:
            await self._after(event)
        else:
            await self._before(event)

    async def _call(self, context: Any) -> None:
        await call_within(self.function, context, name=self.name,
                          seconds=self.database.limits.hook_timeout)

    async def _read(self, event: ReadEvent) -> None:
        context = ReadContext(hook=self.hook, collection=event.collection,
                              principal=event.principal, db=PrivilegedDatabase(self.database),
                              document_id=event.document_id, query=event.query)
        await self._call(context)
        if event.query is not None:
            if context.query is None:
                raise InvalidQuery(f"{self.name} removed the query of a list read")
            event.query = context.query

    def _context(self, event: WriteEvent) -> WriteContext:
        return WriteContext(hook=self.hook, collection=event.collection,
                            principal=event.principal, db=PrivilegedDatabase(self.database),
                            method=event.method, documents=event.documents,
                            body=event.body if isinstance(event, UpdateDocument) else None,
                            ids=list(event.ids),
                            filter=event.filter if isinstance(event, DeleteWhere) else None)

    async def _before(self, event: WriteEvent) -> None:
        context = self._context(event)
        await self._call(context)
        stamp = None if event.parent is None else event.parent.stamp()
        event.documents = [d if "_id" in d else new_document(d, event.principal.author,
                                                             parent=stamp)
                           for d in context.documents]
        if isinstance(event, UpdateDocument) and context.body is not None:
            event.body = context.body
            event.update = parse_update(context.body, "patch" if event.method == "PATCH"
                                        else "put")

    async def _after(self, event: WriteEvent) -> None:
        started = utc_now()
        try:
            await self._call(self._context(event))
        except DocbaseError as error:
            status, message = describe(error)
            logger.error("%s on %r after the write: %s", self.name, event.collection,
                         message, exc_info=error.__cause__ or error)
            await record(self.database.store, {
                "kind": "after-hook", "name": function_name(self.function),
                "hook": self.hook.value, "collection": event.collection,
                "method": event.method, "ids": list(event.ids) or [
                    d.get("_id") for d in event.documents],
                "status": status, "error": message, "started": started,
                "finished": utc_now(),
            })
