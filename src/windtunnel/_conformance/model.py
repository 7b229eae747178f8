"""Conformance check results: a status, the contract clause enforced, and the evidence.

A harness fault (CheckStatus.ERROR) never counts against the runtime; NOT_MEASURED never counts as passed;
INFO records what a contract calls optional (the required part held) and is never scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from windtunnel._conversation.model import Conversation
from windtunnel._core.vocabulary import CheckStatus


class CheckResult(BaseModel):
    schema_version: Literal[1] = 1
    id: str
    title: str
    clause: str = Field(description="the contract clause this check enforces (docs/conformance.md)")
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


class OptionalAbsent(Exception):
    """Raised by a check whose required part held when what it measured further is optional in the contract
    and absent (usage not reported: unknown); an INFO record, never a failure. Carries evidence."""

    def __init__(self, detail: str, evidence: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.evidence = evidence or {}


class CheckFailed(Exception):
    """Raised by a check when the runtime broke the requirement; carries evidence."""

    def __init__(self, detail: str, evidence: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.evidence = evidence or {}


def declared_not_handled(
    declaration: str, reasons: Mapping[str, str], evidence: dict[str, Any] | None = None
) -> None:
    """INFO, never PASSED: raise OptionalAbsent when the runtime declares in `declaration` (a runtime.toml
    key) that it does not handle what `reasons` names, each with its reason; nothing when it names nothing.
    The one path every runtime.toml "does not handle" declaration takes to a check's status."""
    if reasons:
        named = "; ".join(f"{name}: {reason}" for name, reason in reasons.items())
        raise OptionalAbsent(
            f"declared not handled ({declaration}): {named}", {**(evidence or {}), "declared": dict(reasons)}
        )
