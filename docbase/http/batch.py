"""``POST /batch``: several ``/rest`` requests in one, all or nothing by default.

The handler authenticates the batch's credential, checks the body
(:func:`~docbase.core.batch.parse_batch`) and runs the requests in order
(:func:`~docbase.core.batch.run_requests`), each through this same application as if
sent alone (:class:`~docbase.http.subrequests.SubRequests`): the same routes,
authorization, validation, hooks and pipeline, with the batch's credential. An atomic
batch runs inside the store's transaction (:func:`~docbase.core.batch.atomically`),
whose change events go out after commit; the first failing request rolls it back and
answers its own status with ``index`` and the answers so far. ``Idempotency-Key``
applies to the whole batch (:mod:`docbase.http.idempotency`).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post

from docbase.core.batch import BatchFailed, atomically, parse_batch, run_requests, tagged
from docbase.core.batch.references import Answer
from docbase.core.errors import DocbaseError
from docbase.core.ids import new_object_id
from docbase.http.bodies import read_json
from docbase.http.context import SERVER_STATE, identify
from docbase.http.errors import error_body
from docbase.http.idempotency import idempotent
from docbase.http.operations import json_response
from docbase.http.subrequests import SubRequests

BATCH = "/batch"
BATCH_PATHS = [BATCH, "/db/{db_name:str}" + BATCH]


def _refused(exc: DocbaseError) -> Answer:
    body = error_body(exc)
    return Answer(body["status"], body)


@post(BATCH_PATHS, middleware=[idempotent], status_code=200)
async def run_batch(request: Request[Any, Any, Any]) -> Response[bytes]:
    """``POST /batch``: ``{"requests": [...], "atomic": true}`` (``docs/batch.md``)."""
    ctx = await identify(request, request.app.state[SERVER_STATE])
    database = ctx.database
    batch = parse_batch(await read_json(request, database.limits), database.limits.batch)
    prefix = request.scope["path"][:len(request.scope["path"]) - len(ctx.path)]
    perform = SubRequests(request, prefix).perform
    batch_id = new_object_id()
    try:
        if batch.atomic:
            async with atomically(database.store, batch_id):
                answers = await run_requests(batch, perform, _refused)
        else:
            with tagged(batch_id):
                answers = await run_requests(batch, perform, _refused)
    except BatchFailed as failed:
        return json_response(request, failed.body(), failed.failure.status)
    return json_response(request, {"responses": [a.as_json() for a in answers]},
                         extra={"x-batch-id": batch_id})


BATCH_HANDLERS = [run_batch]
"""The ``/batch`` route handlers."""
