"""Scripted tapes: recorded from the scripted stand-in upstream, so no model's behaviour is on them to age.

A tape's header says `lineage.scripted: true` only when its recorder's upstream was the scripted stand-in
of `wt tapes record --scripted-upstream` (TapeBuilder sets it; nothing else does). Such a tape is exempt
from the age limit (policy.is_stale), because every answer on it is a decision of the scenario's own
golden reference case, which is committed next to it: it goes out of date when the scenario changes, not
when a calendar does. The mark is not taken on trust: wherever the scenario is at hand (`wt tapes verify`,
the certify tapes stage) `scripted_problems` requires every recorded answer to equal the scenario's golden
decisions, in order. A live-recorded tape that claims the mark therefore fails, unless the live model
answered exactly the script, and then the tape holds nothing a live model decided (docs/tapes.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from windtunnel._core.reference import ReferenceCase, ReferenceDecision
from windtunnel._scenario.model import Scenario
from windtunnel._tapes.model import Interaction, Tape
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM, is_scripted
from windtunnel._wire.registry import dialect_for_path
from windtunnel._wire.tools import bare
from windtunnel.errors import UsageError


def golden_case(scenario: Scenario) -> ReferenceCase:
    """The scenario's first golden reference case: the decisions the scripted upstream answers with."""
    for case in scenario.reference_cases:
        if case.kind == "golden":
            return case
    raise UsageError(
        f"scenario {scenario.name!r} has no golden reference case, so the scripted upstream has nothing to "
        "answer with",
        hint="add a golden ReferenceCase to the scenario, or record against a real model with --upstream URL",
        scenario=scenario.name,
    )


def scripted_problems(tape: Tape, scenario: Scenario | None) -> list[str]:
    """Why the tape's `scripted` mark does not hold (empty when it holds, or the tape claims nothing)."""
    lineage = tape.header.lineage
    if not lineage.scripted:
        return []
    claim = f"TapeCorrupt: tape {tape.label} is marked scripted (exempt from the age limit), but"
    if not is_scripted(lineage.upstream):
        return [
            f"{claim} it was recorded from {lineage.upstream}, not the scripted upstream {SCRIPTED_UPSTREAM}"
        ]
    if scenario is None:
        return [
            f"{claim} it names no scenario of its pack, so its answers cannot be checked against a script"
        ]
    try:
        decisions = golden_case(scenario).decisions
    except UsageError as exc:
        return [f"{claim} {exc.message}"]
    if len(tape.interactions) != len(decisions):
        return [
            f"{claim} it holds {len(tape.interactions)} answer(s) and scenario {scenario.name!r} scripts "
            f"{len(decisions)}: it was not recorded from this scenario's script"
        ]
    return [
        f"{claim} answer seq {interaction.seq} is not decision {index} of scenario {scenario.name!r}'s golden "
        f"case ({difference}): it was not recorded from the script, or the script changed since"
        for index, (interaction, decision) in enumerate(zip(tape.interactions, decisions, strict=True))
        if (difference := _difference(interaction, decision)) is not None
    ]


def _difference(interaction: Interaction, decision: ReferenceDecision) -> str | None:
    response = interaction.response
    if response.status != 200:
        return f"HTTP {response.status}"
    dialect = dialect_for_path(interaction.request.path)
    answer = response.body
    if response.events is not None:
        answer = dialect.assemble(response.events)
    said = (
        dialect.answer({"response": dialect.logged_response(answer)}) if isinstance(answer, Mapping) else None
    )
    if said is None or said.role != "assistant":
        return "no assistant message"
    if (said.text or None) != (decision.content or None):
        return "other content"
    found = [(bare(call.name), call.arguments if call.arguments != "" else {}) for call in said.calls]
    if found != [(call.name, dict(call.arguments)) for call in decision.tool_calls]:
        return "other tool calls"
    return None
