"""The execution seam of proving: play one reference case (or mutant) and say whether its gate passed.

Proving never drives a runtime itself. It hands each case to a `CaseRunner`: the local executor
(`windtunnel._prove.local_executor`) plays it in-process; a container-backed executor plays it
through the reference runtime and the model gateway. Either way only inference is scripted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from windtunnel._score.gates import reported_tool_names

if TYPE_CHECKING:
    from windtunnel._core.reference import ReferenceCase
    from windtunnel._packs.pack import Pack
    from windtunnel._runner.execute import RunResult
    from windtunnel._scenario.model import Scenario
    from windtunnel._trace.models import Trace


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseOutcome:
    """What one played case came to.

    `gate_passed` is whether the scenario's gate passed the run; `summary` is the score's one-line
    summary. `error` is set when the run itself was invalid (precondition, integrity, runtime...):
    such a run is no evidence either way. `effect` is `gate_observables()` of the run's trace, or
    None when the executor cannot compute it; mutation calls a mutant equivalent only when its
    effect equals the golden's.
    """

    gate_passed: bool
    summary: str
    error: str | None = None
    effect: str | None = None

    @classmethod
    def from_result(cls, result: RunResult) -> CaseOutcome:
        score = result.score
        return cls(
            gate_passed=score.passed,
            summary=score.summary(),
            error=score.error.message if score.error is not None else None,
            effect=gate_observables(result.trace),
        )


class CaseRunner(Protocol):
    """Plays one case of `scenario` (from `pack`) with fresh mocks and a fresh handle.

    `case` is one of the scenario's reference cases or a mutant of a golden; only the model's
    decisions are scripted, the tools really run. Returns the outcome; raises when the case could
    not be played at all (the caller records that as `broken_check`).
    """

    def __call__(self, pack: Pack, scenario: Scenario, case: ReferenceCase) -> CaseOutcome: ...


RECEIVED_FIELDS: tuple[str, ...] = ("server", "name", "arguments", "result", "is_error", "violation", "error")
"""What of each tool call the mocks received is its effect; `at` (when) is not."""


def gate_observables(trace: Trace) -> str:
    """A digest of everything a run did that a gate could observe.

    That is the final content, the world state, the tool names reported, every tool call the
    mocks received with its arguments and its result (whether it erred or was denied), and the
    run's error kind. The calls count even when no state probe reads the world: a refund of 10.0
    instead of 5.0 is a different effect whether or not this pack's gate looks at the amount.
    The received calls are compared in a canonical order, since calls made together to two mocks
    land in either order; when they were made and token usage are left out on purpose: they
    measure the runtime, not what the agent did. Two runs with the same digest did the same thing.
    """
    received = [
        json.dumps({key: call.get(key) for key in RECEIVED_FIELDS}, sort_keys=True, default=str)
        for call in trace.mcp_calls or []
    ]
    seen = {
        "final_content": trace.final_content,
        "state": trace.state,
        "reported": reported_tool_names(trace),
        "received": sorted(received),
        "error": trace.error.kind if trace.error is not None else None,
    }
    body = json.dumps(seen, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()
