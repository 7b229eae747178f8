"""How a public door shows what it re-exports: under the door's own name, never a private module's."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any


def publish(door: str, namespace: MutableMapping[str, Any], names: Iterable[str]) -> None:
    """Set `__module__` of each re-exported class and function that a private module defines to `door`,
    so reprs and tracebacks name the door (`windtunnel.api.Scenario`); the first door to publish a name
    keeps it, so importing a second door that re-exports it too changes nothing."""
    for name in names:
        value = namespace[name]
        if getattr(value, "__module__", "").startswith("windtunnel._"):
            try:
                value.__module__ = door
            except (AttributeError, TypeError):
                continue
