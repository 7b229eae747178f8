"""The reference-case values: scripted model decisions for the golden/poison self-tests (`wt selftest`).

Both the authoring layer (`Scenario.reference_cases`) and the SPI (`provision_reference()`) speak them, so
they live below both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from windtunnel._core.faults import ModelFault
from windtunnel._core.frozen import freeze

ReferenceKind = Literal["golden", "poison"]


@dataclass(frozen=True, slots=True)
class ReferenceToolCall:
    """One tool call the scripted model emits: a tool name and its JSON-serialisable arguments."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceDecision:
    """One scripted model response inside a turn: tool calls (non-final) or content (final).

    `fault`, when set, makes the answer fail as scripted (windtunnel._core.faults): an error status instead
    of the answer, or the answer broken off, malformed or late.
    """

    content: str | None = None
    tool_calls: Sequence[ReferenceToolCall] = ()
    fault: ModelFault | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", freeze(self.tool_calls))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceCase:
    """A scripted decision path: `golden` must pass the scenario's gate, `poison` must fail it.

    `reason` says what a poison case gets wrong; it is grader-only text.
    """

    name: str
    kind: ReferenceKind
    decisions: Sequence[ReferenceDecision]
    reason: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "decisions", freeze(self.decisions))
