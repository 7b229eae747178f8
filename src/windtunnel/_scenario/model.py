"""The authoring contract: scenarios, their gates and their reference (golden/poison) cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from windtunnel._scenario.expectations import Expect
from windtunnel._scenario.frozen import freeze
from windtunnel._scenario.preconditions import Precondition
from windtunnel._scenario.sources import Source
from windtunnel._scenario.tiers import Tier

ReferenceKind = Literal["golden", "poison"]


@dataclass(frozen=True, slots=True)
class ReferenceToolCall:
    """One tool call the scripted model emits: a tool name and its JSON-serialisable arguments."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceDecision:
    """One scripted model response inside a turn: tool calls (non-final) or content (final)."""

    content: str | None = None
    tool_calls: Sequence[ReferenceToolCall] = ()

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A task for an agent and the gate that grades it.

    `prompt` is one user turn, or a sequence of user turns sent in one session (multi-turn).
    `target_facts` is a list of any-of groups: every group must be met by the final content
    (see windtunnel._scenario.gates for the matching rule).
    `tier` is the run tier, *when* the scenario runs (smoke, stable, live-flaky, quarantined); None takes
    the pack's. It is not an assertion kind: what the scenario asserts is `expect` (docs/estate.md).
    """

    name: str
    prompt: str | Sequence[str]
    target_facts: Sequence[Sequence[str]] = ()
    requires_tool_use: bool = False
    reference_cases: Sequence[ReferenceCase] = ()
    must_call: Sequence[str] = ()
    expect: Expect = field(default_factory=Expect)
    tags: Sequence[str] = ()
    owner: str | None = None
    pack: str | None = None
    system_prompt: str | None = None
    preconditions: Sequence[Precondition] = ()
    sources: Sequence[Source] = ()
    description: str = ""
    tier: Tier | None = None

    def __post_init__(self) -> None:
        from windtunnel._scenario.validation import validate_scenario

        object.__setattr__(self, "prompt", freeze(self.prompt))
        groups = freeze(self.target_facts)
        object.__setattr__(
            self, "target_facts", tuple(map(freeze, groups)) if isinstance(groups, tuple) else groups
        )
        for name in ("reference_cases", "must_call", "tags", "preconditions", "sources"):
            object.__setattr__(self, name, freeze(getattr(self, name)))
        validate_scenario(self)

    @property
    def turns(self) -> tuple[str, ...]:
        """The user turns, in order; one entry for a single-turn scenario."""
        return self.prompt if isinstance(self.prompt, tuple) else (self.prompt,)

    @property
    def goldens(self) -> tuple[ReferenceCase, ...]:
        return tuple(case for case in self.reference_cases if case.kind == "golden")

    @property
    def poisons(self) -> tuple[ReferenceCase, ...]:
        return tuple(case for case in self.reference_cases if case.kind == "poison")

    def case(self, name: str) -> ReferenceCase:
        for case in self.reference_cases:
            if case.name == name:
                return case
        raise KeyError(name)
