"""The authoring rules of docs/selftests.md: each broken rule raises ScenarioError naming scenario, case and decision."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.api import ReferenceCase, ReferenceDecision, ReferenceToolCall, Scenario
from windtunnel.errors import ScenarioError

CALL = ReferenceToolCall("write_artifact", {"safe": True})


def scenario(*cases: ReferenceCase, prompt: Any = "Do it.") -> Scenario:
    return Scenario(name="s1", prompt=prompt, target_facts=[["done"]], reference_cases=list(cases))


def case(*decisions: ReferenceDecision, name: str = "c1", kind: Any = "golden") -> ReferenceCase:
    return ReferenceCase(name=name, kind=kind, decisions=decisions)


def error_of(*cases: ReferenceCase, prompt: Any = "Do it.") -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        scenario(*cases, prompt=prompt)
    return caught.value


def test_non_final_decision_without_tool_call() -> None:
    error = error_of(case(ReferenceDecision(content="thinking"), ReferenceDecision(content="done")))
    assert (error.scenario, error.case, error.decision_index) == ("s1", "c1", 0)  # type: ignore[attr-defined]
    assert "non-final decision has no tool call" in str(error)
    assert "scenario 's1', reference case 'c1', decision 0" in str(error)


def test_final_decision_with_tool_calls() -> None:
    error = error_of(case(ReferenceDecision(tool_calls=(CALL,))))
    assert error.decision_index == 0  # type: ignore[attr-defined]
    assert "final decision has tool calls" in str(error)


def test_final_decision_needs_non_empty_content() -> None:
    error = error_of(case(ReferenceDecision(tool_calls=(CALL,)), ReferenceDecision(content="  ")))
    assert error.decision_index == 1  # type: ignore[attr-defined]
    assert "no content" in str(error)


def test_arguments_must_be_json_serialisable() -> None:
    bad = ReferenceToolCall("write_artifact", {"when": object()})
    error = error_of(case(ReferenceDecision(tool_calls=(bad,)), ReferenceDecision(content="done")))
    assert "not JSON-serialisable" in str(error)
    assert error.decision_index == 0  # type: ignore[attr-defined]


def test_nan_is_not_json() -> None:
    bad = ReferenceToolCall("refund", {"amount": float("nan")})
    assert "not JSON-serialisable" in str(
        error_of(case(ReferenceDecision(tool_calls=(bad,)), ReferenceDecision(content="ok")))
    )


def test_case_names_unique_per_scenario() -> None:
    good = case(ReferenceDecision(content="done"))
    error = error_of(good, case(ReferenceDecision(content="done"), kind="poison"))
    assert "used twice" in str(error)
    assert error.case == "c1"  # type: ignore[attr-defined]


def test_kind_must_be_golden_or_poison() -> None:
    assert "kind is 'gold'" in str(error_of(case(ReferenceDecision(content="x"), kind="gold")))


def test_empty_decisions() -> None:
    assert "has no decisions" in str(error_of(case()))


def test_multi_turn_cases_close_each_turn_with_content() -> None:
    two_turns = ["first", "second"]
    ok = scenario(
        case(
            ReferenceDecision(tool_calls=(CALL,)),
            ReferenceDecision(content="which one?"),
            ReferenceDecision(tool_calls=(CALL,)),
            ReferenceDecision(content="done"),
        ),
        prompt=two_turns,
    )
    assert ok.turns == ("first", "second")
    error = error_of(
        case(ReferenceDecision(tool_calls=(CALL,)), ReferenceDecision(content="done")), prompt=two_turns
    )
    assert "1 content-only decision(s) for 2 user turns" in str(error)


def test_prompt_and_target_facts_are_checked() -> None:
    with pytest.raises(ScenarioError, match="prompt must be"):
        Scenario(name="p", prompt="")
    with pytest.raises(ScenarioError, match=r"target_facts\[0\]"):
        Scenario(name="p", prompt="x", target_facts=[[]])
