"""Batches of requests: ``POST /batch`` and ``db.batch()`` (``docs/batch.md``).

- :mod:`.requests`: the body of a batch, checked before anything runs;
- :mod:`.references`: ``{N.field}`` and ``{"$ref": "N.field"}``, earlier answers' values;
- :mod:`.runner`: the requests in order, stopping an atomic batch at its first failure;
- :mod:`.unit`: the batch a write belongs to, its transaction, and its change events
  held back until commit.
"""

from docbase.core.batch.references import Answer
from docbase.core.batch.requests import Batch, BatchRequest, parse_batch
from docbase.core.batch.runner import BatchFailed, run_requests
from docbase.core.batch.unit import BatchUnit, atomically, current_unit, tagged

__all__ = ["Answer", "Batch", "BatchFailed", "BatchRequest", "BatchUnit", "atomically",
           "current_unit", "parse_batch", "run_requests", "tagged"]
