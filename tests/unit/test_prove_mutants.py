"""Mutants of a golden: each operator, where it applies, and that every mutant is a valid reference case."""

from __future__ import annotations

from collections import Counter

from windtunnel._prove.mutants import GENERIC_CONTENT, derive_mutants
from windtunnel.api import ReferenceCase, ReferenceDecision, ReferenceToolCall, Scenario

CALL = ReferenceToolCall
GOLDEN = ReferenceCase(
    name="g",
    kind="golden",
    decisions=[
        ReferenceDecision(
            tool_calls=[CALL("read", {"id": "K-1"}), CALL("pay", {"amount": 4.5, "lines": [{"rush": True}]})]
        ),
        ReferenceDecision(tool_calls=[CALL("pay", {"amount": 0})]),
        ReferenceDecision(content="Paid 4.50."),
    ],
)
SCENARIO = Scenario(name="s", prompt="pay it", reference_cases=[GOLDEN])


def test_each_operator_applies_everywhere_it_can() -> None:
    derived = derive_mutants(SCENARIO, GOLDEN, ["read", "pay", "refund"])
    assert Counter(m.operator for m in derived.mutants) == {
        "drop_call": 3,
        "change_argument": 5,  # "K-1"; 4.5 +1 and x2; the nested true; 0 +1 (0 x2 is no change)
        "swap_tool": 6,  # each of 3 calls to each of 2 other tools
        "change_content": 1,
    }
    assert derived.skipped_invalid == 0
    assert all(m.case.kind == "poison" and m.golden == "g" for m in derived.mutants)
    assert len({m.case.name for m in derived.mutants}) == len(derived.mutants)


def test_dropping_the_only_call_of_a_decision_drops_the_decision() -> None:
    drops = {m.where: m for m in derive_mutants(SCENARIO, GOLDEN, []).mutants if m.operator == "drop_call"}
    only = drops["decisions[1].tool_calls[0]"]
    assert only.detail == 'drops pay({"amount": 0}) with its decision'
    assert len(only.case.decisions) == 2
    first = drops["decisions[0].tool_calls[0]"]
    assert [call.name for call in first.case.decisions[0].tool_calls] == ["pay"]


def test_argument_changes_name_the_nested_path_and_values() -> None:
    changes = {
        (m.where, m.detail)
        for m in derive_mutants(SCENARIO, GOLDEN, []).mutants
        if m.operator == "change_argument"
    }
    assert (
        "decisions[0].tool_calls[1].arguments.lines[0].rush",
        "pay argument lines[0].rush: True -> False (flipped)",
    ) in changes
    assert (
        "decisions[0].tool_calls[0].arguments.id",
        "read argument id: 'K-1' -> 'K-1 (mutated)' (altered)",
    ) in changes
    assert ("decisions[0].tool_calls[1].arguments.amount", "pay argument amount: 4.5 -> 9.0 (x2)") in changes


def test_the_content_mutant_replaces_only_the_final_content() -> None:
    (mutant,) = [m for m in derive_mutants(SCENARIO, GOLDEN, []).mutants if m.operator == "change_content"]
    assert mutant.case.decisions[-1].content == GENERIC_CONTENT
    assert mutant.case.decisions[:-1] == GOLDEN.decisions[:-1]


def test_a_multi_turn_golden_keeps_its_turn_ends() -> None:
    lone = ReferenceCase(
        name="g",
        kind="golden",
        decisions=[
            ReferenceDecision(tool_calls=[CALL("read", {})]),
            ReferenceDecision(content="Which one?"),
            ReferenceDecision(content="Done."),
        ],
    )
    scenario = Scenario(name="s", prompt=["pay", "the first"], reference_cases=[lone])
    derived = derive_mutants(scenario, lone, [])
    assert [m.operator for m in derived.mutants] == ["drop_call", "change_content"]
    assert [d.content for d in derived.mutants[0].case.decisions] == ["Which one?", "Done."]


def test_every_mutant_is_revalidated_and_invalid_ones_are_skipped() -> None:
    two_turns = Scenario(
        name="s",
        prompt=["pay", "the first"],
        reference_cases=[
            ReferenceCase(
                name="g",
                kind="golden",
                decisions=[
                    ReferenceDecision(content="Which one?"),
                    ReferenceDecision(content="Done."),
                ],
            )
        ],
    )
    derived = derive_mutants(two_turns, GOLDEN, ["read"])  # a one-turn golden cannot script two turns
    assert derived.mutants == () and derived.skipped_invalid == 11  # 3 drops, 5 changes, 2 swaps, 1 content
