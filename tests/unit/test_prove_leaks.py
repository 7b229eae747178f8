"""The leaked-answer check over real test packs: each rule, its excerpt, and both fields it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._prove.leaks import find_leaks, trivial
from windtunnel._prove.models import Leak
from windtunnel.api import (
    Expect,
    MockServer,
    Outcome,
    Pack,
    ReferenceCase,
    ReferenceDecision,
    ReferenceToolCall,
    Scenario,
    StateExpectation,
    Tool,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prove_packs"
REPO = Path(__file__).resolve().parents[2]


def leaks_of(pack_dir: str, scenario: str) -> list[Leak]:
    pack = load_pack(str(FIXTURES / pack_dir))
    return find_leaks(pack, pack.scenario(scenario))


def test_an_8_word_run_of_a_controls_reason_in_a_later_turn() -> None:
    assert leaks_of("shop", "leak_word_run") == [
        Leak(
            rule="word_run",
            excerpt="charges only the tea although the customer asked for the whole basket",
            visible_field="prompt[1]",
            grader_field="reference_cases[charge-tea-only].reason",
        )
    ]


def test_37_50_in_the_prompt_leaks_the_expected_37_5() -> None:
    found = leaks_of("shop", "leak_number")
    assert {(leak.excerpt, leak.visible_field, leak.grader_field) for leak in found} == {
        ("37.50", "prompt[0]", "expect.outcome.state[1].value"),
        (
            "37.50",
            "prompt[0]",
            "reference_cases[charge-everything].decisions[1].tool_calls[0].arguments.amount",
        ),
        ("37.50", "prompt[0]", "target_facts[0][0]"),  # a one-word target fact with a digit is a value
        ("37.50", "prompt[0]", "target_facts[0][1]"),  # "37.5", compared by value
    }
    assert all(leak.rule == "expected_value" for leak in found)


def test_a_value_nested_in_a_list_leaks_from_the_system_prompt() -> None:
    found = leaks_of("shop", "leak_nested")
    assert {(leak.excerpt, leak.visible_field, leak.grader_field) for leak in found} == {
        ("GIFT-42", "system_prompt", "expect.outcome.state[3].value[1]"),
        (
            "GIFT-42",
            "system_prompt",
            "reference_cases[charge-everything].decisions[1].tool_calls[0].arguments.tags[1]",
        ),
    }


def test_leaks_through_tools_persona_and_skills_name_their_field() -> None:
    found = {
        (leak.rule, leak.visible_field, leak.grader_field, leak.excerpt)
        for leak in leaks_of("leaky_tools", "loyal_discount")
    }
    args = "reference_cases[apply-loyalty].decisions[0].tool_calls[0].arguments"
    schema = "tool:apply_discount.input_schema.properties.percent.description"
    persona_run = "the loyalty discount was applied once, at the rate printed on the\ncustomer's loyalty card"
    assert found == {
        ("word_run", "agent.persona_doc[PERSONA.md]", "evaluator_files[GRADING.md]", persona_run),
        ("target_fact", "agent.skills[0][SKILL.md]", "target_facts[0][0]", "loyalty discount applied"),
        ("expected_value", "tool:apply_discount.description", "expect.outcome.state[0].value", "LOYAL-2231"),
        ("expected_value", "tool:apply_discount.description", f"{args}.code", "LOYAL-2231"),
        ("expected_value", schema, "expect.outcome.state[1].value", "17.50"),
        ("expected_value", schema, f"{args}.percent", "17.50"),
    }


@pytest.mark.parametrize(
    "scenario", ["charge_basket", "no_control", "source_unresolved", "assumed", "weak_gate"]
)
def test_the_clean_shop_scenarios_leak_nothing(scenario: str) -> None:
    assert leaks_of("shop", scenario) == []


@pytest.mark.parametrize("pack_dir", ["support_desk", "artifacts"])
def test_the_bundled_packs_leak_nothing(pack_dir: str) -> None:
    pack = load_pack(str(REPO / "scenarios" / pack_dir))
    assert {scenario.name: find_leaks(pack, scenario) for scenario in pack.scenarios} == {
        scenario.name: [] for scenario in pack.scenarios
    }


@pytest.mark.parametrize(
    ("value", "is_trivial"),
    [
        (True, True),
        (None, True),
        (7, True),
        (-9, True),
        (9.0, True),
        (10, False),
        (0.5, False),
        ("yes", True),
        ("damaged", True),
        ("audit-log", True),
        ("B-20", False),
        ("gift wrap", False),
        ("7", True),
        ("48", False),
        ("0.5", False),
    ],
)
def test_trivially_short_values_never_count(value: object, is_trivial: bool) -> None:
    assert trivial(value) is is_trivial


def _pack(scenario: Scenario, state: dict[str, object], description: str = "A tool.") -> Pack:
    tool = Tool(name="act", description=description, input_schema={"type": "object"}, handler=lambda s, a: {})
    return Pack(name="p", scenarios=[scenario], mcp_servers={"m": lambda: MockServer("m", [tool], state)})


def _scenario(prompt: str, op: str = "equals", value: object = 41.25) -> Scenario:
    golden = ReferenceCase(
        name="g",
        kind="golden",
        decisions=[
            ReferenceDecision(tool_calls=[ReferenceToolCall("act", {"x": "ignored"})]),
            ReferenceDecision(content="done"),
        ],
    )
    return Scenario(
        name="s",
        prompt=prompt,
        reference_cases=[golden],
        expect=Expect(outcome=Outcome(state=[StateExpectation("/m/total", op, value)])),  # type: ignore[arg-type]
    )


def test_a_value_the_world_already_holds_is_not_a_computed_answer() -> None:
    scenario = _scenario("The price list says 41.25.")
    assert find_leaks(_pack(scenario, {"prices": {"tea": 41.25}}), scenario) == []
    assert [leak.excerpt for leak in find_leaks(_pack(scenario, {"prices": {"tea": 20.0}}), scenario)] == [
        "41.25"
    ]


def test_a_forbidden_value_is_not_the_answer() -> None:
    scenario = _scenario("Do not write 41.25 there.", op="not_equals")
    assert find_leaks(_pack(scenario, {}), scenario) == []


def test_a_single_word_target_fact_is_ordinary_language() -> None:
    scenario = Scenario(
        name="s",
        prompt="It is protected, is it not eligible?",
        target_facts=[["protected"], ["not eligible"]],
    )
    assert [(leak.rule, leak.excerpt) for leak in find_leaks(_pack(scenario, {}), scenario)] == [
        ("target_fact", "not eligible")
    ]


def test_every_string_and_number_of_a_tool_schema_is_agent_visible() -> None:
    leaks = leaks_of("leaky_tools", "voucher_schema")
    found = {
        (leak.visible_field, leak.grader_field, leak.excerpt)
        for leak in leaks
        if leak.rule == "expected_value"
    }
    assert {leak.rule for leak in leaks} == {"expected_value", "word_run"}  # the pack-wide persona run too
    schema = "tool:redeem_voucher.input_schema.properties"
    args = "reference_cases[redeem].decisions[0].tool_calls[0].arguments"
    assert found == {
        (f"{schema}.voucher.examples[0]", f"{args}.voucher", "VOUCH-7781"),
        (f"{schema}.amount.default", f"{args}.amount", "23.75"),
        (f"{schema}.amount.default", "expect.outcome.state[0].value", "23.75"),
        (f"{schema}.store.enum[1]", f"{args}.store", "STORE-0412"),
        (f"{schema}.customer.properties.tier.const", f"{args}.customer.tier", "GOLD-3"),
        (f"{schema}.customer.properties.ticket.description", "target_facts[0][0]", "RF-3310"),
        (f"{schema}.fee.const", "target_facts[1][0]", "2.4"),  # the fact says 2.40: compared by value
        (f"{schema}.SEAT-77.name", f"{args}.seat", "SEAT-77"),  # a property name is shown too
    }


def test_a_single_word_target_fact_with_a_digit_is_compared_as_a_value() -> None:
    scenario = Scenario(
        name="s",
        prompt="Your refund RF-3310 comes to 37.5, is that all?",
        target_facts=[["RF-3310"], ["37.50"], ["done"]],
    )
    found = [
        (leak.rule, leak.visible_field, leak.grader_field, leak.excerpt)
        for leak in find_leaks(_pack(scenario, {}), scenario)
    ]
    assert found == [
        ("expected_value", "prompt[0]", "target_facts[0][0]", "RF-3310"),
        ("expected_value", "prompt[0]", "target_facts[1][0]", "37.5"),
    ]
    held = _pack(scenario, {"refunds": {"RF-3310": {"amount": 37.5}}})  # data the agent may look up
    assert find_leaks(held, scenario) == []
