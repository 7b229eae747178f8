"""What the agent sees and what only the grader may know, gathered from a pack and one scenario.

Agent-visible: every prompt turn, the system prompt (the scenario's, else the pack's), the persona
doc and skills files, and each tool's name, description and every string and number of its input
schema. Grader-only: target facts, expected state values, the reference cases' arguments and
contents, a negative control's reason, and the pack's evaluator files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from windtunnel._core.mock_kit import MockServer
from windtunnel._core.reference import ReferenceCase
from windtunnel._packs.pack import Pack
from windtunnel._prove.text import value_number, words
from windtunnel._scenario.model import Scenario
from windtunnel.errors import PackError

ANSWER_OPS = frozenset({"equals", "contains", "length"})
"""State ops whose value is what the world must hold; a `not_equals` value is a wrong answer, not the answer."""


@dataclass(frozen=True, slots=True)
class Text:
    """Words the agent sees or the grader keeps, with the pack field they stand in (`prompt[0]`)."""

    field: str
    text: str


@dataclass(frozen=True, slots=True)
class Value:
    """A grader-only value (a state probe's expected value, a target fact), with the field it stands in."""

    field: str
    value: Any


def pack_path(pack: Pack, relative: str) -> Path:
    """A pack file's path: relative to the pack root, as the runner resolves it (`effective_config`)."""
    return (pack.root or Path()) / relative


def read_pack_file(pack: Pack, relative: str, role: str) -> str:
    path = pack_path(pack, relative)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(
            f"pack {pack.name!r}: {role} {relative!r} cannot be read as UTF-8 text ({exc})",
            hint=f"put the file at {path} or fix the path in the pack",
            pack=pack.name,
            path=str(path),
        ) from exc


def pack_servers(pack: Pack) -> list[MockServer]:
    """Fresh MockServers from the pack's factories: their tools and initial fixture state.

    A factory that raises is a PackError naming the pack and the factory (`Pack.plans()`).
    """
    return [plan.factory() for plan in pack.plans()]


def agent_visible(pack: Pack, scenario: Scenario, servers: Sequence[MockServer]) -> list[Text]:
    seen = [Text(f"prompt[{index}]", turn) for index, turn in enumerate(scenario.turns)]
    if scenario.system_prompt:
        seen.append(Text("system_prompt", scenario.system_prompt))
    elif pack.agent.system_prompt:
        seen.append(Text("agent.system_prompt", pack.agent.system_prompt))
    if pack.agent.persona_doc:
        text = read_pack_file(pack, pack.agent.persona_doc, "agent.persona_doc")
        seen.append(Text(f"agent.persona_doc[{pack.agent.persona_doc}]", text))
    for index, skill in enumerate(pack.agent.skills):
        seen.append(Text(f"agent.skills[{index}][{skill}]", read_pack_file(pack, skill, "agent.skills")))
    for server in servers:
        for tool in server.tools.values():
            seen.append(Text(f"tool:{tool.name}.name", tool.name))
            seen.append(Text(f"tool:{tool.name}.description", tool.description))
            seen += _schema_texts(f"tool:{tool.name}.input_schema", tool.input_schema)
    return seen


def _schema_texts(field: str, schema: Any) -> Iterator[Text]:
    """Every string and number in a tool's input schema, property names included: the model sees it all.

    That is descriptions and titles, but also `default`, `examples`, `enum`, `const` and every
    nested schema, so a value written there is agent-visible wherever it sits.
    """
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                yield from (Text(f"{field}.properties.{name}.name", str(name)) for name in value)
            yield from _schema_texts(f"{field}.{key}", value)
    elif isinstance(schema, list | tuple):
        for index, item in enumerate(schema):
            yield from _schema_texts(f"{field}[{index}]", item)
    elif isinstance(schema, str):
        yield Text(field, schema)
    elif isinstance(schema, int | float) and not isinstance(schema, bool):
        yield Text(field, repr(schema))


def leaves(field: str, value: Any) -> Iterator[Value]:
    """Every JSON leaf under `value` with its path: values nested in lists and objects count."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from leaves(f"{field}.{key}", item)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from leaves(f"{field}[{index}]", item)
    else:
        yield Value(field, value)


def case_field(case: ReferenceCase) -> str:
    return f"reference_cases[{case.name}]"


def argument_values(case: ReferenceCase) -> Iterator[Value]:
    for index, decision in enumerate(case.decisions):
        for number, call in enumerate(decision.tool_calls):
            where = f"{case_field(case)}.decisions[{index}].tool_calls[{number}].arguments"
            yield from leaves(where, dict(call.arguments))


def expected_values(scenario: Scenario) -> list[Value]:
    """The answers a run must produce.

    Positive state expectations, the goldens' argument values, and every target fact that is one
    word holding a digit (an amount such as "37.50", an id such as "A-1042"): such a fact is a
    value, not language, so it is compared as one (numbers by value).
    """
    found: list[Value] = []
    for index, expectation in enumerate(scenario.expect.outcome.state):
        if expectation.op in ANSWER_OPS:
            found += leaves(f"expect.outcome.state[{index}].value", expectation.value)
    for case in scenario.goldens:
        found += argument_values(case)
    for group, facts in enumerate(scenario.target_facts):
        found += [
            Value(f"target_facts[{group}][{index}]", fact)
            for index, fact in enumerate(facts)
            if len(words(fact)) == 1 and any(char.isdigit() for char in fact)
        ]
    return found


def grader_texts(pack: Pack, scenario: Scenario) -> list[Text]:
    """Grader-only text, for the 8-word-run rule."""
    found = [
        Text(f"target_facts[{group}][{index}]", fact)
        for group, facts in enumerate(scenario.target_facts)
        for index, fact in enumerate(facts)
    ]
    for index, expectation in enumerate(scenario.expect.outcome.state):
        found += _strings(leaves(f"expect.outcome.state[{index}].value", expectation.value))
    for case in scenario.reference_cases:
        if case.reason.strip():
            found.append(Text(f"{case_field(case)}.reason", case.reason))
        found += _strings(argument_values(case))
        for index, decision in enumerate(case.decisions):
            if decision.content:
                found.append(Text(f"{case_field(case)}.decisions[{index}].content", decision.content))
    for relative in pack.evaluator_files:
        text = read_pack_file(pack, relative, "evaluator file")
        found.append(Text(f"evaluator_files[{relative}]", text))
    return found


def _strings(values: Iterator[Value]) -> list[Text]:
    return [Text(item.field, item.value) for item in values if isinstance(item.value, str)]


@dataclass(frozen=True, slots=True)
class World:
    """What the world already holds before any run: keys and values of every mock's fixture state."""

    strings: frozenset[str]
    numbers: frozenset[Decimal]

    def holds(self, value: Any) -> bool:
        number = value_number(value)
        if number is not None and number in self.numbers:
            return True
        return isinstance(value, str) and " ".join(value.casefold().split()) in self.strings


def world_of(servers: Sequence[MockServer]) -> World:
    strings: set[str] = set()
    numbers: set[Decimal] = set()
    for server in servers:
        for item in _world_items(server.snapshot()):
            number = value_number(item)
            if number is not None:
                numbers.add(number)
            if isinstance(item, str):
                strings.add(" ".join(item.casefold().split()))
    return World(frozenset(strings), frozenset(numbers))


def _world_items(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield key  # an id the world is keyed by (an order id) is data the agent can look up
            yield from _world_items(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _world_items(item)
    else:
        yield value
