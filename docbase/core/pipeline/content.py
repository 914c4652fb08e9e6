"""The stage holding every stored document to the rules of a JSON request body.

An HTTP body is checked as it is decoded (:mod:`docbase.core.untrusted_json`); a
document handed to the embedded library, or changed by a before-hook, comes here
unchecked. This stage, the last before the store, applies the same rules to what is
about to be stored, from wherever it came: nesting at most ``limits.max_body_depth``
levels, integers within 64 bits, finite floats, no NUL in a string, JSON values only.
So every engine stores the same things, or refuses them with the same
:class:`~docbase.core.errors.InvalidQuery` (400), before anything is stored.
"""

from __future__ import annotations

from docbase.core.events import Insert, UpdateDocument, WriteEvent
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits
from docbase.core.untrusted_json import check_bounds
from docbase.core.update import IncOp, UnsetOp


class CheckDocumentContent(ReadsLimits):
    """Refuse a write whose documents or update values break the document rules."""

    name = "content"

    def __init__(self, limits: LimitsInForce) -> None:
        self.limits_in_force = limits

    async def __call__(self, write: WriteEvent) -> None:
        """Raise ``InvalidQuery`` naming the document or update path at fault."""
        depth = self.limits.max_body_depth
        match write:
            case Insert(documents=documents):
                many = len(documents) > 1
                for index, document in enumerate(documents):
                    what = f"document {index}" if many else "the document"
                    check_bounds(document, what, depth, document=True)
            case UpdateDocument(update=update):
                for op in update.ops:
                    if isinstance(op, UnsetOp):
                        continue
                    value = op.amount if isinstance(op, IncOp) else op.value
                    check_bounds(value, f"the value for {'.'.join(op.path)!r}", depth,
                                 document=True)
            case _:
                pass
