"""The leaked-answer check (docs/selftests.md): grader-only material must not reach what the agent sees.

Three rules, each giving the excerpt as it stands in the agent-visible text, the agent-visible
field it is in, and the grader field it came from (see windtunnel._prove.material for both sides):

1. an 8-word run of grader-only text: words are case-folded, punctuation between them is ignored;
2. a multi-word target fact (a single-word fact such as "protected" is ordinary language);
3. a computed expected value: a value of a positive state expectation (`equals`, `contains`,
   `length`), of a golden's tool-call arguments, nested values included, or a target fact that is
   one word holding a digit (`37.50`, `A-1042`). Numbers compare by value (37.5 equals 37.50
   equals 37.500; signs are not read). A value the world already holds, as a key or value of a
   mock's initial fixture state (an order id, an item's price), is data the agent may look up,
   not a computed answer, so it does not count.

Trivially short values never count, because they turn up in any text by chance: booleans and
null, integers from -9 to 9 (as numbers or as strings), other strings shorter than 4 characters,
and a single word without a digit (a plain word such as `damaged` copied from the user is, like
a single-word target fact, ordinary language; identifiers and amounts carry digits).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from windtunnel._core.mock_kit import MockServer
from windtunnel._packs.pack import Pack
from windtunnel._prove.material import (
    Text,
    Value,
    World,
    agent_visible,
    expected_values,
    grader_texts,
    pack_servers,
    world_of,
)
from windtunnel._prove.models import Leak
from windtunnel._prove.text import find_number, find_phrase, ngrams, shared_runs, value_number, words
from windtunnel._scenario.model import Scenario

RUN_WORDS = 8


def find_leaks(pack: Pack, scenario: Scenario, servers: Sequence[MockServer] | None = None) -> list[Leak]:
    """Every leak of `scenario`'s grader-only material into what its agent sees, in a stable order."""
    built = list(servers) if servers is not None else pack_servers(pack)
    visible = agent_visible(pack, scenario, built)
    found = [
        *_word_runs(visible, grader_texts(pack, scenario)),
        *_target_facts(visible, scenario),
        *_expected_values(visible, expected_values(scenario), world_of(built)),
    ]
    return list(dict.fromkeys(found))  # the same finding from two paths is one leak


def _word_runs(visible: Sequence[Text], graders: Sequence[Text]) -> Iterator[Leak]:
    for grader in graders:
        grams = ngrams(grader.text, RUN_WORDS)
        if not grams:
            continue
        for seen in visible:
            for run in shared_runs(seen.text, grams, RUN_WORDS):
                yield Leak(rule="word_run", excerpt=run, visible_field=seen.field, grader_field=grader.field)


def _target_facts(visible: Sequence[Text], scenario: Scenario) -> Iterator[Leak]:
    for group, facts in enumerate(scenario.target_facts):
        for index, fact in enumerate(facts):
            phrase = words(fact)
            if len(phrase) < 2:
                continue
            for seen in visible:
                found = find_phrase(seen.text, phrase)
                if found is not None:
                    yield Leak(
                        rule="target_fact",
                        excerpt=found,
                        visible_field=seen.field,
                        grader_field=f"target_facts[{group}][{index}]",
                    )


def _expected_values(visible: Sequence[Text], values: Sequence[Value], world: World) -> Iterator[Leak]:
    for item in values:
        if trivial(item.value) or world.holds(item.value):
            continue
        for seen in visible:
            found = _find_value(seen.text, item.value)
            if found is not None:
                yield Leak(
                    rule="expected_value", excerpt=found, visible_field=seen.field, grader_field=item.field
                )


def _find_value(text: str, value: Any) -> str | None:
    number = value_number(value)
    found = find_number(text, number) if number is not None else None
    if found is None and isinstance(value, str):
        found = find_phrase(text, words(value))
    return found


def trivial(value: Any) -> bool:
    """Too short to prove a leak: see the module docstring."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return float(value).is_integer() and abs(value) < 10
    if isinstance(value, str):
        number = value_number(value)
        if number is not None:  # "48" is the number 48, as short as it is
            return number == number.to_integral_value() and number < 10
        text = value.strip()
        return len(text) < 4 or (len(words(text)) == 1 and not any(char.isdigit() for char in text))
    return True
