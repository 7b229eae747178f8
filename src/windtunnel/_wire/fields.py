"""The value checks dialects share: a field's type and range, and the 400 that names it when it is wrong.

A problem is (message, param): the 400's error message and the field it names. A dialect declares its
fields as a table of name -> Field (fields.BOOLEAN, fields.between(0, 2), ...) and asks first_problem().
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Problem = tuple[str, str | None]
Check = Callable[[Any], bool]


def number(low: float, high: float) -> Check:
    return lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high
    )


def integer(low: float, high: float = math.inf) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def exactly(type_: type) -> Check:
    """Exactly `type_`: a boolean is not a number, and a number is not a boolean."""
    return lambda v: isinstance(v, type_) and (type_ is bool or not isinstance(v, bool))


Field = tuple[Check, str]
"""A field's check, and what a 400 says the field must be when the check fails (first_problem)."""
BOOLEAN: Field = (exactly(bool), "true or false")
OBJECT: Field = (exactly(dict), "an object")
STRING: Field = (exactly(str), "a string")


def between(low: float, high: float) -> Field:
    """A number from `low` to `high`, bounds included (temperature, top_p, penalties)."""
    return number(low, high), f"a number between {low} and {high}"


def at_least(low: int) -> Field:
    """A whole number of at least `low` (token limits, top_k)."""
    return integer(low), f"a whole number of at least {low}"


def whole(low: int, high: int) -> Field:
    """A whole number from `low` to `high`, bounds included."""
    return integer(low, high), f"a whole number from {low} to {high}"


def first_problem(body: dict[str, Any], fields: Mapping[str, Field]) -> Problem | None:
    """The first field of `fields` present (and not null, the default) whose value fails its check."""
    for name, (check, expected) in fields.items():
        value = body.get(name)
        if value is not None and not check(value):
            return f"{name} must be {expected}, got {kind(value)}", name
    return None


def strings(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def kind(value: Any) -> str:
    """A value as an error message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return "a JSON array" if isinstance(value, list) else "a JSON object"
