"""The write and read pipelines: one ordered path for every operation."""

from __future__ import annotations

from docbase.core.pipeline.assembly import Pipeline, read_stages, write_stages
from docbase.core.pipeline.stages import ReadStage, Validator, WriteStage

__all__ = ["Pipeline", "ReadStage", "Validator", "WriteStage", "read_stages", "write_stages"]
