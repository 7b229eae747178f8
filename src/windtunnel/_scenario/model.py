"""The authoring contract: a Scenario, and the rules checked when one is built (errors name scenario, case,
field and index; the shape checks come first, since the rules read the fields).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from windtunnel._core.frozen import freeze
from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._core.tiers import Tier
from windtunnel._scenario.expectations import STATE_OPS, Expect
from windtunnel._scenario.fields import Fields, check_expect, check_target_facts, check_tier, shown
from windtunnel._scenario.preconditions import Precondition
from windtunnel._scenario.sources import SOURCE_KINDS, Source
from windtunnel.errors import ScenarioError


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


def validate_scenario(scenario: Scenario) -> None:
    """Raise ScenarioError on the first broken rule."""
    if not isinstance(scenario.name, str) or not scenario.name.strip():
        raise ScenarioError(
            f"a scenario has name {scenario.name!r}; expected a non-empty string",
            hint="give every Scenario a unique, non-empty name=",
            scenario=scenario.name,
            field="name",
        )
    check_fields(scenario)  # types first: the rules below read the fields
    _check_prompt(scenario)
    _check_target_facts(scenario)
    _check_expectations(scenario)
    seen: set[str] = set()
    for case in scenario.reference_cases:
        check_case_fields(scenario, case)  # a name that is not a string cannot be compared below
        if case.name in seen:
            raise _case_error(
                scenario, case, None, f"case name {case.name!r} is used twice", "rename one of the two cases"
            )
        seen.add(case.name)
        validate_reference_case(scenario, case)
    for source in scenario.sources:
        if source.kind not in SOURCE_KINDS:
            raise ScenarioError(
                f"scenario {scenario.name!r}: source kind {source.kind!r} is not one of {SOURCE_KINDS}",
                hint="use kind='rule', 'file', 'requirement' or 'assumption'",
                scenario=scenario.name,
                field="sources",
            )


def validate_reference_case(scenario: Scenario, case: ReferenceCase) -> None:
    """docs/selftests.md: non-final decisions carry >= 1 tool call; the final one has content and no tool calls.

    In a multi-turn scenario the decisions of all turns follow each other, and the content-only
    decision that closes each turn counts as that turn's final decision.
    """
    check_case_fields(scenario, case)  # mutants are checked here too, before their rules are read
    if case.kind not in ("golden", "poison"):
        raise _case_error(
            scenario, case, None, f"kind is {case.kind!r}", "use kind='golden' or kind='poison'"
        )
    if not case.decisions:
        raise _case_error(scenario, case, None, "has no decisions", "script at least a final decision")
    last = len(case.decisions) - 1
    turn_ends = [index for index, decision in enumerate(case.decisions) if not decision.tool_calls]
    turns = len(scenario.turns)
    for index, decision in enumerate(case.decisions):
        ends_turn = index in turn_ends[: turns - 1]
        _check_decision(scenario, case, index, decision, final=index == last or ends_turn)
    if len(turn_ends) != turns and turns > 1:
        raise _case_error(
            scenario,
            case,
            None,
            f"has {len(turn_ends)} content-only decision(s) for {turns} user turns",
            "in a multi-turn scenario, end each turn's decisions with one ReferenceDecision(content=...)",
        )


def _check_decision(
    scenario: Scenario, case: ReferenceCase, index: int, decision: ReferenceDecision, *, final: bool
) -> None:
    if final:
        if decision.tool_calls:
            raise _case_error(
                scenario,
                case,
                index,
                "the final decision has tool calls",
                "end the case with ReferenceDecision(content=...) and no tool_calls",
            )
        if not isinstance(decision.content, str) or not decision.content.strip():
            raise _case_error(
                scenario,
                case,
                index,
                "the final decision has no content",
                "give the final ReferenceDecision a non-empty content=",
            )
        return
    if not decision.tool_calls:
        raise _case_error(
            scenario,
            case,
            index,
            "a non-final decision has no tool call",
            "every decision before the last must carry at least one ReferenceToolCall",
        )
    for call in decision.tool_calls:
        _check_call(scenario, case, index, call.name, call.arguments)


def _check_call(scenario: Scenario, case: ReferenceCase, index: int, name: object, arguments: object) -> None:
    if not isinstance(name, str) or not name:
        raise _case_error(
            scenario, case, index, f"a tool call has name {name!r}", "name the tool with a string"
        )
    if not isinstance(arguments, Mapping):
        raise _case_error(
            scenario,
            case,
            index,
            f"tool call {name!r} has arguments of type {type(arguments).__name__}",
            "pass arguments as a dict of JSON values",
        )
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _case_error(
            scenario,
            case,
            index,
            f"tool call {name!r} has arguments that are not JSON-serialisable ({exc})",
            "use only str, int, float, bool, None, lists and dicts with string keys",
        ) from None


def _check_prompt(scenario: Scenario) -> None:
    turns = scenario.turns
    if not turns or any(not isinstance(turn, str) or not turn.strip() for turn in turns):
        raise ScenarioError(
            f"scenario {scenario.name!r}: prompt must be a non-empty string or a list of non-empty strings",
            hint="set prompt='...' or prompt=['first turn', 'second turn']",
            scenario=scenario.name,
            field="prompt",
        )


def _check_target_facts(scenario: Scenario) -> None:
    for number, group in enumerate(scenario.target_facts):
        if not group or any(not isinstance(fact, str) or not fact.strip() for fact in group):
            raise ScenarioError(
                f"scenario {scenario.name!r}: target_facts[{number}] is {list(group)!r}; "
                "expected a non-empty list of non-empty strings (an any-of group)",
                hint='write target_facts=[["refund issued", "refunded"], ["37.50"]]',
                scenario=scenario.name,
                field=f"target_facts[{number}]",
            )


def _check_expectations(scenario: Scenario) -> None:
    for number, expectation in enumerate(scenario.expect.outcome.state):
        if expectation.op not in STATE_OPS:
            raise ScenarioError(
                f"scenario {scenario.name!r}: expect.outcome.state[{number}] has op {expectation.op!r}",
                hint=f"use one of {', '.join(STATE_OPS)}",
                scenario=scenario.name,
                field=f"expect.outcome.state[{number}].op",
            )
        if not (expectation.pointer == "" or expectation.pointer.startswith("/")):
            raise ScenarioError(
                f"scenario {scenario.name!r}: expect.outcome.state[{number}] pointer {expectation.pointer!r} "
                "is not a JSON pointer",
                hint="write pointers like '/billing/refunds/0/amount' (RFC 6901)",
                scenario=scenario.name,
                field=f"expect.outcome.state[{number}].pointer",
            )


def _case_error(
    scenario: Scenario, case: ReferenceCase, index: int | None, problem: str, hint: str
) -> ScenarioError:
    where = f"scenario {scenario.name!r}, reference case {case.name!r}"
    if index is not None:
        where += f", decision {index}"
    return ScenarioError(
        f"{where}: {problem}", hint=hint, scenario=scenario.name, case=case.name, decision_index=index
    )


def check_fields(scenario: Scenario) -> None:
    """Raise ScenarioError on the first field of the wrong shape; see the module docstring."""
    fields = Fields(scenario.name)
    check_target_facts(fields, scenario.target_facts)
    fields.flag("requires_tool_use", scenario.requires_tool_use)
    fields.strings("must_call", scenario.must_call, "tool names")
    fields.strings("tags", scenario.tags, "tags")
    for name in ("owner", "pack", "system_prompt"):
        fields.text(name, getattr(scenario, name), optional=True)
    fields.text("description", scenario.description)
    check_tier(fields, scenario.tier)
    fields.items(
        "preconditions", scenario.preconditions, Precondition, "write preconditions=[StateProbeAvailable()]"
    )
    hint = "write sources=[Source(kind='file', path='POLICY.md', quote='...')]"
    for index, source in enumerate(fields.items("sources", scenario.sources, Source, hint)):
        fields.text(f"sources[{index}].quote", source.quote)
        fields.text(f"sources[{index}].path", source.path, optional=True)
        fields.text(f"sources[{index}].ref", source.ref, optional=True)
    check_expect(fields, scenario.expect)
    hint = "write reference_cases=[ReferenceCase(name=..., kind='golden', decisions=(...))]"
    fields.items("reference_cases", scenario.reference_cases, ReferenceCase, hint)


def check_case_fields(scenario: Scenario, case: ReferenceCase) -> None:
    """The shape of one reference case: its name, reason, decisions and their tool calls."""
    if not isinstance(case.name, str) or not case.name.strip():
        raise Fields(scenario.name).error(
            "reference_cases",
            f"holds a case named {shown(case.name)}; expected a non-empty string",
            "give every ReferenceCase a name='...'",
        )
    fields = Fields(scenario.name, case.name)
    fields.text("reason", case.reason)
    hint = "write decisions=(ReferenceDecision(tool_calls=(...)), ReferenceDecision(content='...'))"
    for index, decision in enumerate(fields.items("decisions", case.decisions, ReferenceDecision, hint)):
        at = Fields(scenario.name, case.name, index)
        at.text("content", decision.content, optional=True)
        at.items(
            "tool_calls",
            decision.tool_calls,
            ReferenceToolCall,
            "write tool_calls=(ReferenceToolCall('name', {...}),)",
        )
