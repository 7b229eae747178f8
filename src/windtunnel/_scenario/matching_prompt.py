"""A stable key for a prompt, so a prompt can be recognised whatever its whitespace."""

from __future__ import annotations


def prompt_key(prompt: str) -> str:
    return " ".join(prompt.split())
