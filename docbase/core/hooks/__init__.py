"""Server-side hooks around the collection operations, and scheduled jobs (``docs/hooks.md``)."""

from __future__ import annotations

from docbase.core.hooks.context import (
    HOOK_PRINCIPAL,
    JobContext,
    PrivilegedDatabase,
    ReadContext,
    WriteContext,
)
from docbase.core.hooks.jobs import Job, JobRegistry
from docbase.core.hooks.pipeline_points import HookFunction, HookPoint, HookRegistry
from docbase.core.hooks.points import Hook

__all__ = [
    "HOOK_PRINCIPAL",
    "Hook",
    "HookFunction",
    "HookPoint",
    "HookRegistry",
    "Job",
    "JobContext",
    "JobRegistry",
    "PrivilegedDatabase",
    "ReadContext",
    "WriteContext",
]
