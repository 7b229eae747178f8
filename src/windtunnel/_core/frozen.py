"""Freezing the sequence fields of authoring values, without ever splitting a string into characters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def freeze(value: Any) -> Any:
    """A tuple of any list-like value.

    A string, bytes, a mapping or a non-iterable is kept as it was given, so the shape checks
    (windtunnel._scenario.fields) can refuse it by name instead of iterating it.
    """
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        return value
    return tuple(value)
