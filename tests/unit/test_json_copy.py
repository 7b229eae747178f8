"""json_copy: an independent copy of JSON data, deepcopy for everything else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from windtunnel._core.json_copy import json_copy


def test_nested_json_is_copied_independently() -> None:
    original: dict[str, Any] = {"a": [1, {"b": "x", "c": None}], "d": 1.5, "e": True}
    copied = json_copy(original)
    assert copied == original
    copied["a"][1]["b"] = "changed"
    copied["a"].append(2)
    assert original == {"a": [1, {"b": "x", "c": None}], "d": 1.5, "e": True}


@dataclass
class _Box:
    items: list[int] = field(default_factory=list)


def test_values_that_are_not_json_are_deep_copied() -> None:
    box = _Box([1])
    original: dict[str, Any] = {"box": box, "pair": ([1], 2)}
    copied = json_copy(original)
    copied["box"].items.append(2)
    copied["pair"][0].append(3)
    assert box.items == [1]
    assert original["pair"] == ([1], 2)


def test_a_value_holding_itself_is_copied_as_deepcopy_would() -> None:
    looped: dict[str, Any] = {"name": "x"}
    looped["self"] = looped
    copied = json_copy(looped)
    assert copied is not looped and copied["self"] is copied
