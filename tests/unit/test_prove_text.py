"""Words and numbers in text: the matching rules the leaked-answer check is built on."""

from __future__ import annotations

from decimal import Decimal

import pytest

from windtunnel._prove.text import find_number, find_phrase, ngrams, shared_runs, value_number, words


def test_words_keep_identifiers_and_amounts_whole() -> None:
    assert words("Order A-1042: refund 37.50, or 1,200 (can't).") == [
        "order",
        "a-1042",
        "refund",
        "37.50",
        "or",
        "1,200",
        "can't",
    ]


@pytest.mark.parametrize("text", ["total 37.5", "total 37.50.", "total $37.500", "(37.50)"])
def test_numbers_compare_by_value(text: str) -> None:
    assert find_number(text, Decimal("37.5")) is not None


@pytest.mark.parametrize("text", ["total 137.5", "total 37.55", "order A-37.5x", "37 and a half"])
def test_a_different_number_is_not_the_value(text: str) -> None:
    assert find_number(text, Decimal("37.5")) is None


def test_value_number_reads_json_numbers_and_number_strings_only() -> None:
    assert value_number(37.5) == Decimal("37.5")
    assert value_number("37.50") == Decimal("37.5")
    assert value_number(-12) == Decimal("12")
    assert value_number(True) is None
    assert value_number("A-1042") is None
    assert value_number("$37.50") is None


def test_phrase_is_found_whatever_the_case_spacing_and_punctuation_and_quoted_as_written() -> None:
    assert find_phrase("It is NOT\n  eligible, sorry", ["not", "eligible"]) == "NOT\n  eligible"
    assert find_phrase("it is notable eligible", ["not", "eligible"]) is None


def test_shared_runs_are_maximal_and_quoted_from_the_visible_text() -> None:
    grader = "one two three four five six seven eight nine ten"
    grams = ngrams(grader, 8)
    visible = "Intro: One two three four five six seven EIGHT nine. Later: two three four."
    assert list(shared_runs(visible, grams, 8)) == ["One two three four five six seven EIGHT nine"]
    assert list(shared_runs("one two three four five six seven", grams, 8)) == []
