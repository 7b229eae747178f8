"""Matching rules shared by gates: target facts in text, JSON pointers, value equality.

Target-fact rule: both the fact and the final content are case-folded and their whitespace collapsed;
a fact is met when it occurs in the content with no letter or digit directly before or after it (so
"37.5" does not match inside "137.5" or "37.55", and "refund" does not match "refunded").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

MISSING = object()


def normalise_text(text: str) -> str:
    return " ".join(text.casefold().split())


def fact_met(fact: str, content: str) -> bool:
    needle = re.escape(normalise_text(fact))
    return re.search(rf"(?<![0-9a-z]){needle}(?![0-9a-z])", normalise_text(content)) is not None


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901; returns MISSING when any step is absent."""
    if pointer == "":
        return document
    value = document
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping):
            if token not in value:
                return MISSING
            value = value[token]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            if not token.isdigit() or int(token) >= len(value):
                return MISSING
            value = value[int(token)]
        else:
            return MISSING
    return value


def same_value(left: Any, right: Any) -> bool:
    """JSON equality where numbers compare by value (37.5 == 37.50) but booleans are not numbers."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return float(left) == float(right)
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)
