"""Small readers every dialect's evidence side shares: text of a content value, decoded argument text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def text_of(content: Any) -> str:
    """A content value's text: a string, or the text of each part of a list (other parts as JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"] if isinstance(part, Mapping) and isinstance(part.get("text"), str) else _json(part)
            for part in content
        )
    return "" if content is None else _json(content)


def text_parts_of(content: Any) -> str:
    """A content value's text alone: a string, or the `text` of each text part of a list; other parts
    (an image, a document) are left out, not spelt as JSON as text_of() spells them."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str))


def decoded(raw: Any) -> Any:
    """Arguments decoded when they are JSON text; raw when not JSON (a model may emit broken JSON)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
