"""Server-sent event framing every dialect shares, and the piece size streamed text and arguments are cut to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PIECE = 32
"""Characters of content or arguments per event: several events per message, so clients must reassemble."""


def frame(event: Mapping[str, Any]) -> bytes:
    """One SSE event: `data: <compact JSON>` and a blank line, as OpenAI chat sends it."""
    return b"data: " + _json(event) + b"\n\n"


def named_frame(event: Mapping[str, Any]) -> bytes:
    """One SSE event with an `event: <type>` line first: the Anthropic SDK skips events without one,
    and Responses clients read it too."""
    return b"event: " + str(event.get("type", "message")).encode() + b"\ndata: " + _json(event) + b"\n\n"


class NamedEvents:
    """For a Dialect whose stream is named events (`named_frame`) with no terminator of its own: the
    stream ends where its last event (Anthropic's message_stop, Responses' response.completed) ends."""

    done_frame = b""

    def frame(self, event: Mapping[str, Any]) -> bytes:
        return named_frame(event)


def pieces(text: str) -> list[str]:
    """`text` cut into PIECE-sized pieces (none for empty text)."""
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


def _json(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
