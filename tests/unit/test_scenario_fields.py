"""Field shapes of the authoring contract: a bare string is never split into characters, a wrong type is named."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.api import (
    AgentSetup,
    Benchmark,
    Expect,
    Pack,
    ReferenceCase,
    ReferenceDecision,
    Scenario,
    Security,
)
from windtunnel.errors import PackError, ScenarioError

FINAL = ReferenceDecision(content="done")
# Untyped doors to the constructors, to build the wrong values an author's typo makes.
Loose: Any = __import__("windtunnel.api", fromlist=["Scenario"])


def refused(**fields: Any) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        Scenario(name="refund_mug", prompt="Refund the mug.", **fields)
    return caught.value


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        (
            {"expect": Expect(security=Security(tools_must_not_call="issue_refund"))},
            "expect.security.tools_must_not_call",
        ),
        (
            {"expect": Expect(security=Security(expected_violations="delete"))},
            "expect.security.expected_violations",
        ),
        (
            {"expect": Expect(benchmark=Benchmark(tools_not_expected="issue_refund"))},
            "expect.benchmark.tools_not_expected",
        ),
        ({"expect": Expect(benchmark=Benchmark(tools_expected="lookup"))}, "expect.benchmark.tools_expected"),
        ({"must_call": "issue_refund"}, "must_call"),
        ({"tags": "smoke"}, "tags"),
        ({"target_facts": "refunded"}, "target_facts"),
        ({"target_facts": ["refunded"]}, "target_facts[0]"),
        ({"target_facts": [["12.50"], "refunded"]}, "target_facts[1]"),
    ],
)
def test_a_bare_string_for_a_list_is_refused_with_the_fix(fields: dict[str, Any], field: str) -> None:
    error = refused(**fields)
    assert (error.scenario, error.field) == ("refund_mug", field)  # type: ignore[attr-defined]
    message = str(error)
    assert f"scenario 'refund_mug': {field} is the string" in message
    assert "expected" in message and "how to fix" in message
    assert "[" in message.split("how to fix:")[1]  # the fix shows the value wrapped in a list


def test_the_fix_shows_the_value_wrapped() -> None:
    error = refused(expect=Expect(security=Security(tools_must_not_call="issue_refund")))
    assert "tools_must_not_call=['issue_refund']" in str(error)
    assert "target_facts=[['refunded']]" in str(refused(target_facts="refunded"))


def test_lists_still_work_and_are_frozen() -> None:
    scenario = Scenario(
        name="s",
        prompt=["one", "two"],
        target_facts=[["a", "b"], ("c",)],
        must_call=["lookup"],
        tags=("smoke",),
        expect=Expect(security=Security(tools_must_not_call=["issue_refund"])),
    )
    assert scenario.target_facts == (("a", "b"), ("c",)) and scenario.must_call == ("lookup",)
    assert scenario.expect.security.tools_must_not_call == ("issue_refund",)
    assert scenario.turns == ("one", "two")


@pytest.mark.parametrize(
    ("fields", "field", "expected"),
    [
        ({"expect": Loose.Outcome(must_succeed=True)}, "expect", "expected an Expect"),
        ({"expect": Loose.Expect(outcome=Loose.Security())}, "expect.outcome", "expected an Outcome"),
        (
            {"expect": Loose.Expect(outcome=Loose.Outcome(state=[("/a", "equals", 1)]))},
            "expect.outcome.state[0]",
            "StateExpectation",
        ),
        (
            {"expect": Loose.Expect(outcome=Loose.Outcome(state=Loose.StateExpectation("/a")))},
            "expect.outcome.state",
            "StateExpectation",
        ),
        (
            {"expect": Loose.Expect(benchmark=Loose.Benchmark(token_budget="500"))},
            "expect.benchmark.token_budget",
            "whole number",
        ),
        ({"requires_tool_use": "yes"}, "requires_tool_use", "True or False"),
        ({"sources": Loose.Source(kind="assumption", quote="x")}, "sources", "Source"),
        ({"sources": [{"kind": "file"}]}, "sources[0]", "expected a Source"),
        ({"preconditions": [object()]}, "preconditions[0]", "Precondition"),
        ({"must_call": [3]}, "must_call[0]", "non-empty string"),
        ({"owner": 7}, "owner", "a string or None"),
        (
            {"reference_cases": Loose.ReferenceCase(name="c", kind="golden", decisions=(FINAL,))},
            "reference_cases",
            "ReferenceCase",
        ),
    ],
)
def test_a_wrong_type_is_a_scenario_error_naming_the_field(
    fields: dict[str, Any], field: str, expected: str
) -> None:
    error = refused(**fields)
    assert error.context["field"] == field, str(error)
    assert expected in str(error) and "how to fix" in str(error)


@pytest.mark.parametrize(
    ("case", "field", "index"),
    [
        (Loose.ReferenceCase(name="c", kind="golden", decisions=FINAL), "decisions", None),
        (Loose.ReferenceCase(name="c", kind="golden", decisions="done"), "decisions", None),
        (Loose.ReferenceCase(name="c", kind="golden", decisions=[{"content": "x"}]), "decisions[0]", None),
        (
            Loose.ReferenceCase(
                name="c",
                kind="golden",
                decisions=(Loose.ReferenceDecision(tool_calls=Loose.ReferenceToolCall("t")), FINAL),
            ),
            "tool_calls",
            0,
        ),
        (
            Loose.ReferenceCase(name="c", kind="golden", decisions=(Loose.ReferenceDecision(content=5),)),
            "content",
            0,
        ),
        (Loose.ReferenceCase(name="c", kind="poison", decisions=(FINAL,), reason=None), "reason", None),
    ],
)
def test_reference_case_shapes_name_scenario_case_and_decision(
    case: ReferenceCase, field: str, index: int | None
) -> None:
    error = refused(reference_cases=[case])
    assert (error.scenario, error.case, error.field, error.decision_index) == (  # type: ignore[attr-defined]
        "refund_mug",
        "c",
        field,
        index,
    )
    assert "scenario 'refund_mug', reference case 'c'" in str(error)


def test_a_case_name_that_is_not_a_string_is_named_not_a_type_error() -> None:
    error = refused(reference_cases=[ReferenceCase(name=["c"], kind="golden", decisions=(FINAL,))])  # type: ignore[arg-type]
    assert error.field == "reference_cases" and "non-empty string" in str(error)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"evaluator_files": "POLICY.md"}, "evaluator_files"),
        ({"profiles": "replay"}, "profiles"),
        ({"agent": AgentSetup(skills="skill.md")}, "agent.skills"),
        ({"scenarios": Scenario(name="s", prompt="p")}, "scenarios"),
    ],
)
def test_pack_list_fields_refuse_a_bare_string_or_a_single_value(fields: dict[str, Any], field: str) -> None:
    base: dict[str, Any] = {"scenarios": [Scenario(name="s", prompt="p")]}
    with pytest.raises(PackError) as caught:
        Pack(name="shop", **{**base, **fields})
    assert caught.value.field == field and "how to fix" in str(caught.value)  # type: ignore[attr-defined]
    assert "pack 'shop'" in str(caught.value)
