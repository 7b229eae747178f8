"""A deep copy of JSON-like data (dicts, lists, str, numbers, bool, None) several times cheaper than deepcopy."""

from __future__ import annotations

import copy
from typing import Any

_ATOMS = (str, int, float, bool, type(None))


def json_copy(value: Any) -> Any:
    """An independent copy of `value`: dicts and lists rebuilt, JSON atoms shared (they are immutable).

    Anything else (a tuple, a custom object) is handed to `copy.deepcopy`, so the result is always as
    independent of `value` as deepcopy's. Mock evidence (calls, results, fixture state) is JSON, and
    copying it is on every tool call's path: copy.deepcopy's memo and dispatch cost several times more.
    A dict or list holding itself has no JSON form; it recurses until RecursionError, as json.dumps would.
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)
