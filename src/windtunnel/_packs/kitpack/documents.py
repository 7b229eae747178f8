"""The kit's long tool results: documents of a given size that read like real traffic.

Each document is text a runtime must pass to the model byte for byte: multi-byte UTF-8 (2-, 3- and 4-byte
characters, a combining accent, a right-to-left run), deeply nested JSON laid out with indentation, long
arrays, and whitespace that a careless runtime trims or folds (tabs, runs of spaces, CRLF, blank lines,
trailing spaces, a trailing newline). It opens with a title line, not with `{` or `[`: a client that parses
JSON-looking text and serialises it again (pydantic-ai does) then still hands it on as the text it is.
"""

# ruff: noqa: RUF001 - look-alike letters and typographic quotes on purpose: folding them to ASCII is caught
from __future__ import annotations

import json
from typing import Any

SIZES: dict[str, int] = {
    "brief": 900,
    "page": 4_096,
    "chapter": 16_384,
    "volume": 65_536,
    "archive": 512 * 65_536,
}
"""The documents the `document` tool serves, by name: their length in UTF-8 bytes, exactly. The 32 MiB
`archive` is the volume 512 times over: a result no runtime can hold under the `faults/oom` check's
memory limit (docs/conformance.md, "The harness's own faults")."""
REPEATED = {"archive": "volume"}
"""Documents made of another one repeated (built in one step: growing 32 MiB piece by piece is slow)."""

# Look-alike letters and typographic quotes on purpose: a runtime that folds them to ASCII is caught.
_PROSE = (
    "Ünïcödé line — naïve café, façade; 日本語のテキスト; emoji 🧪🌬️ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢; "
    "e\u0301 combining; עברית RTL run; Ελληνικά; “quotes” ‘single’ «guillemets» …\n"
    "\tTabbed line\twith\ttabs   and   runs of spaces   \n"
    "CRLF line\r\n"
    "\n"
    "   indented after a blank line, trailing spaces   \n"
)


def _nested(depth: int) -> dict[str, Any]:
    """A JSON object nested `depth` levels deep, each level with a long array and non-ASCII keys."""
    node: dict[str, Any] = {"leaf": "終わり", "values": list(range(40))}
    for level in range(depth, 0, -1):
        node = {
            "level": level,
            "clé": f"niveau {level} — ü",
            "items": [{"n": n, "tag": f"t{n:03d}", "ok": n % 3 == 0, "x": n / 7} for n in range(2)],
            "child": node,
        }
    return node


def _pieces() -> tuple[str, ...]:
    """The parts a document repeats, smallest first: prose, a long array, nested JSON."""
    # ASCII-escaped JSON (\u00e9): a runtime that decodes the escapes changes the text, and is caught.
    items = [{"id": n, "name": f"élément {n}", "tags": ["alpha", "β"][: n % 3]} for n in range(30)]
    array = json.dumps(items)
    nested = json.dumps(_nested(12), ensure_ascii=False, indent=2)
    return (_PROSE, "array: " + array + "\n", "nested:\n" + nested + "\n")


def document(name: str) -> str:
    """The document called `name` (a key of SIZES): exactly SIZES[name] bytes of UTF-8, ending in a newline."""
    size = SIZES[name]
    if name in REPEATED:
        unit = REPEATED[name]
        return document(unit) * (size // SIZES[unit])
    text = f"Document {name} ({size} bytes)\n"
    used = len(text.encode("utf-8"))
    pieces = [(piece, len(piece.encode("utf-8"))) for piece in _pieces()]
    while True:  # each round adds every part that still fits, in order
        fitting = [(piece, length) for piece, length in pieces if used + length < size]
        if not fitting:
            break
        for piece, length in fitting:
            if used + length < size:
                text, used = text + piece, used + length
    # Pad to the exact size with ASCII filler (whole characters: never a split multi-byte one).
    missing = size - used - 1
    text += ("0123456789 abcdefghij " * (missing // 22 + 1))[:missing] + "\n"
    return text
