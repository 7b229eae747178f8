"""Words and numbers in text, kept with their place so a finding can quote the text as it stands."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

# A word is letters/digits, and may carry inner joiners: "A-1042", "37.50", "1,200", "can't", "10:30".
_WORD = re.compile(r"[^\W_]+(?:[-'\u2019.,:/][^\W_]+)*")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Token:
    norm: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The words of `text`, case-folded, with their spans in the original."""
    return [Token(match.group().casefold(), match.start(), match.end()) for match in _WORD.finditer(text)]


def words(text: str) -> list[str]:
    return [token.norm for token in tokens(text)]


def number_of(word: str) -> Decimal | None:
    """The value of a word that is a plain number ("37.50", "1,200"), else None. Signs are not read."""
    if not _NUMBER.fullmatch(word):
        return None
    try:
        return Decimal(word.replace(",", ""))
    except InvalidOperation:
        return None


def value_number(value: Any) -> Decimal | None:
    """The magnitude of a JSON number, or of a string that is one number; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return abs(Decimal(repr(value)))
        except InvalidOperation:
            return None  # inf and nan are not values an agent could be handed
    if isinstance(value, str):
        found = words(value)
        return number_of(found[0]) if len(found) == 1 and found[0] == value.strip().casefold() else None
    return None


def excerpt(text: str, found: Sequence[Token]) -> str:
    return text[found[0].start : found[-1].end]


def find_phrase(text: str, phrase: Sequence[str]) -> str | None:
    """The first place `text` holds the words of `phrase` in a row, quoted from `text`."""
    if not phrase:
        return None
    found = tokens(text)
    size = len(phrase)
    for index in range(len(found) - size + 1):
        window = found[index : index + size]
        if all(token.norm == word for token, word in zip(window, phrase, strict=True)):
            return excerpt(text, window)
    return None


def find_number(text: str, number: Decimal) -> str | None:
    """The first number in `text` equal to `number` by value (37.5 equals 37.50), quoted from `text`."""
    for token in tokens(text):
        value = number_of(token.norm)
        if value is not None and value == number:
            return text[token.start : token.end]
    return None


def ngrams(text: str, size: int) -> set[tuple[str, ...]]:
    found = words(text)
    return {tuple(found[index : index + size]) for index in range(len(found) - size + 1)}


def shared_runs(text: str, grams: set[tuple[str, ...]], size: int) -> Iterator[str]:
    """Each longest run of `text` whose every `size`-word window is in `grams`, quoted from `text`."""
    found = tokens(text)
    index = 0
    while index + size <= len(found):
        if tuple(token.norm for token in found[index : index + size]) not in grams:
            index += 1
            continue
        end = index + size
        while end < len(found) and tuple(t.norm for t in found[end - size + 1 : end + 1]) in grams:
            end += 1
        yield excerpt(text, found[index:end])
        index = end
