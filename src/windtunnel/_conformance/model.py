"""Conformance check results: a status, the docs/conformance.md section enforced, and the evidence.

A harness fault (CheckStatus.ERROR) never counts against the runtime; NOT_MEASURED never counts as passed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from windtunnel._conversation.model import Conversation
from windtunnel._core.vocabulary import CheckStatus


class CheckResult(BaseModel):
    schema_version: Literal[1] = 1
    id: str
    title: str
    passage: str = Field(description="the section of docs/conformance.md this check enforces")
    runtime: str
    status: CheckStatus
    detail: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    conversations: list[Conversation] = Field(
        default_factory=list, description="the scripted sessions the check ran, in the three views"
    )


class NotMeasured(Exception):
    """Raised by a check that cannot measure this runtime (a missing optional ability)."""


class CheckFailed(Exception):
    """Raised by a check when the runtime broke the requirement; carries evidence."""

    def __init__(self, detail: str, evidence: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.evidence = evidence or {}
