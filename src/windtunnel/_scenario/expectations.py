"""The three assertion kinds of a scenario: outcome, security and benchmark (docs/estate.md).

Assertion kinds say *what* a case asserts; run tiers (windtunnel._core.tiers) say *when* it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from windtunnel._core.frozen import freeze

StateOp = Literal["equals", "not_equals", "present", "absent", "contains", "not_contains", "length"]
STATE_OPS: tuple[str, ...] = (
    "equals",
    "not_equals",
    "present",
    "absent",
    "contains",
    "not_contains",
    "length",
)


@dataclass(frozen=True, slots=True)
class StateExpectation:
    """An expectation on world state, read through the StateProbe after the run.

    `pointer` is an RFC 6901 JSON pointer into the probe's snapshot (for example
    `/billing/refunds/0/amount`). Numbers compare by value, so 37.5 equals 37.50.
    """

    pointer: str
    op: StateOp = "equals"
    value: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """Hard: what the run achieved. `must_succeed` fails a run that ended in an error or with no answer."""

    must_succeed: bool = True
    state: Sequence[StateExpectation] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", freeze(self.state))


@dataclass(frozen=True, slots=True, kw_only=True)
class Security:
    """Hard: the sandbox contract.

    `tools_must_not_call` fails a run that called any of them. `expected_violations` names tools
    whose call the mock must have *denied*: the denial is the expected result, so a run that never
    tried, or was allowed, fails.
    """

    tools_must_not_call: Sequence[str] = ()
    expected_violations: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools_must_not_call", freeze(self.tools_must_not_call))
        object.__setattr__(self, "expected_violations", freeze(self.expected_violations))


@dataclass(frozen=True, slots=True, kw_only=True)
class Benchmark:
    """Two-grade, on purpose (docs/estate.md, "Assertion kinds").

    Thresholds fail the case when violated: `max_tool_calls_hint`, `token_budget`,
    `tools_not_expected`, `prompt_cache_min_share`. Observations are recorded and compared but never
    fail: `tools_expected`, `llm_calls_expected`, `prompt_cache_expected_share`.

    The prompt-cache shares (0 < share <= 1) are the part of each call's already-sent prefix that must
    be read from the prompt cache (windtunnel._score.cache); without per-call usage they are "not
    evaluated", never passed.
    """

    max_tool_calls_hint: int | None = None
    token_budget: int | None = None
    tools_not_expected: Sequence[str] = ()
    tools_expected: Sequence[str] = ()
    llm_calls_expected: int | None = None
    prompt_cache_min_share: float | None = None
    prompt_cache_expected_share: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools_not_expected", freeze(self.tools_not_expected))
        object.__setattr__(self, "tools_expected", freeze(self.tools_expected))


@dataclass(frozen=True, slots=True, kw_only=True)
class Expect:
    """The `expect:` block of a scenario: one part per assertion kind."""

    outcome: Outcome = field(default_factory=Outcome)
    security: Security = field(default_factory=Security)
    benchmark: Benchmark = field(default_factory=Benchmark)
