"""Streams on tape: SSE data lines to event objects (each dialect reassembles its own events)."""

from __future__ import annotations

import json
from typing import Any

DONE = "[DONE]"


def sse_data(line: str) -> str | None:
    """The payload of an SSE `data:` line, or None for comments, other fields and blank lines."""
    if not line.startswith("data:"):
        return None
    return line[5:].lstrip(" ")


def parse_event(payload: str) -> dict[str, Any]:
    event = json.loads(payload)
    if not isinstance(event, dict):
        raise ValueError(f"an SSE event is a JSON {type(event).__name__}, expected an object")
    return event
