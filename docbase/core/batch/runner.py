"""Running a batch's requests in order, each with the references to earlier answers.

:func:`run_requests` is shared by ``POST /batch`` and ``db.batch()``: it resolves each
request's references (:mod:`.references`), hands it to ``perform`` (which runs it as if
sent alone) and collects the answers. In an atomic batch the first failing answer stops
it with :class:`BatchFailed`, which the caller raises out of the transaction so that
nothing is applied.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from docbase.core.batch.references import Answer, resolve_body, resolve_path
from docbase.core.batch.requests import Batch, BatchRequest
from docbase.core.errors import DocbaseError

Perform = Callable[[BatchRequest, str, Any], Awaitable[Answer]]
"""Run one request (with its path and body resolved) and return its answer."""
Refuse = Callable[[DocbaseError], Answer]
"""The answer of a request refused before it ran (a reference it could not resolve)."""


class BatchFailed(Exception):  # a control-flow signal, not an error answer
    """Request ``index`` of an atomic batch failed; ``answers`` up to and including it."""

    def __init__(self, index: int, answers: list[Answer]) -> None:
        super().__init__(f"request {index} of the batch failed")
        self.index = index
        self.answers = answers

    @property
    def failure(self) -> Answer:
        """The failing request's answer."""
        return self.answers[self.index]

    def body(self) -> dict[str, Any]:
        """``{"name", "message", "status", "index", "responses"}``: the batch's answer."""
        failed = self.failure.body if isinstance(self.failure.body, dict) else {}
        return {"name": failed.get("name", "BatchFailed"),
                "message": f"request {self.index}: "
                           f"{failed.get('message', 'the request failed')}",
                "status": self.failure.status, "index": self.index,
                "responses": [answer.as_json() for answer in self.answers]}


async def run_requests(batch: Batch, perform: Perform, refuse: Refuse) -> list[Answer]:
    """Run every request of ``batch`` in order; return their answers.

    Raises:
        BatchFailed: a request of an atomic batch failed (status 400 or more).

    """
    answers: list[Answer] = []
    for index, request in enumerate(batch.requests):
        try:
            path = resolve_path(request.path, answers)
            body = resolve_body(request.body, answers)
        except DocbaseError as exc:
            answer = refuse(exc)
        else:
            answer = await perform(request, path, body)
        answers.append(answer)
        if batch.atomic and answer.status >= 400:
            raise BatchFailed(index, answers)
    return answers
