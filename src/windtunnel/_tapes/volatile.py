"""Volatile-field rule sets: what changes between identical runs of a Messages or Responses request, removed
before it is hashed. Each set is named and versioned; a tape names the set it was hashed with, and replay
hashes live requests with that same set, so a tape recorded under an older set keeps matching.

- `wt-volatile-v1`: Anthropic `cache_control` markers anywhere in the body; a harness's attribution line
  (`x-anthropic-billing-header: ...`, Claude Code's) in any text.
- `wt-volatile-v2`: v1, and
  - the date in a line that names the current date (`Today's date is 2026-12-06.`,
    `<current_date>2026-12-06</current_date>`, `Current date: 2026-12-06`): harnesses stamp the day
    into their environment context, so a tape recorded one day would match nothing the next;
  - the number in a tool-timing line (`Wall time: 0.0249 seconds`, `Elapsed: 12 ms`, `Duration: 1.5 s`)
    that a harness puts around a tool result;
  - the `id` of each item of a Responses `input` list: item ids a client mints per run (`msg_<uuid>`,
    `fco_<uuid>`); the `call_id` that pairs a call with its output stays.
- `wt-volatile-v3`: v2, and the value of a line that names the machine's operating system version
  (`OS Version: Linux 6.18.44-...`, Claude Code's environment block): the kernel a harness runs on
  changes with the machine, so a tape recorded on one would match nothing on the next (and a tape
  should not say which machine recorded it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

V1 = "wt-volatile-v1"
V2 = "wt-volatile-v2"
V3 = "wt-volatile-v3"
CURRENT = V3
"""The set new tapes are hashed with."""

_ATTRIBUTION = "x-anthropic-billing-header:"
_DATE_LINE = re.compile(
    r"^.*\b(?:today'?s date|current[ _]date|date today)\b.*$", re.IGNORECASE | re.MULTILINE
)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TIMING_LINE = re.compile(
    r"^((?:Wall time|Elapsed(?: time)?|Duration): )\d+(?:\.\d+)?( ?(?:seconds|second|s|ms))$", re.MULTILINE
)
_OS_VERSION_LINE = re.compile(r"^(.*\b(?:OS|kernel) version: ).+$", re.IGNORECASE | re.MULTILINE)


def _v1_text(text: str) -> str:
    if _ATTRIBUTION not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not line.startswith(_ATTRIBUTION))


def _v2_text(text: str) -> str:
    text = _DATE_LINE.sub(lambda line: _ISO_DATE.sub("<date>", line.group(0)), _v1_text(text))
    return _TIMING_LINE.sub(r"\g<1><n>\g<2>", text)


def _v3_text(text: str) -> str:
    return _OS_VERSION_LINE.sub(r"\g<1><os>", _v2_text(text))


def _normaliser(text_rule: Callable[[str], str], *, item_ids: bool) -> Callable[[Any], Any]:
    def normalise(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: normalise(item) for k, item in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [normalise(item) for item in value]
        if isinstance(value, str):
            return text_rule(value)
        return value

    def body_rule(body: Any) -> Any:
        kept = normalise(body)
        if item_ids and isinstance(kept, dict) and isinstance(kept.get("input"), list):
            # a Responses request's items: the ids a client mints per run go, the call_ids stay
            kept["input"] = [_without_id(item) for item in kept["input"]]
        return kept

    return body_rule


def _without_id(item: Any) -> Any:
    return {k: v for k, v in item.items() if k != "id"} if isinstance(item, Mapping) else item


RULE_SETS: Mapping[str, Callable[[Any], Any]] = {
    V1: _normaliser(_v1_text, item_ids=False),
    V2: _normaliser(_v2_text, item_ids=True),
    V3: _normaliser(_v3_text, item_ids=True),
}
"""Every rule set this version can hash with, by name: body -> the body with its volatile parts removed."""


def normalised(body: Any, rules: str = CURRENT) -> Any:
    """`body` with the volatile parts of the rule set `rules` removed (KeyError for an unknown set)."""
    return RULE_SETS[rules](body)
