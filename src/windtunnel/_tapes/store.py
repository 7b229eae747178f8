"""Reading and writing tape files: fail closed on load, atomic and re-verified on write."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from windtunnel._tapes.errors import TapeCorrupt, TapeMissing, TapeSecretFound
from windtunnel._tapes.fingerprint import FINGERPRINT_VERSION
from windtunnel._tapes.model import TAPE_SCHEMA_VERSION, Interaction, Tape, TapeHeader
from windtunnel._tapes.secrets import SecretScanner

_M = TypeVar("_M", bound=BaseModel)
_RERECORD = "re-record the tape (`wt tapes rerecord --tape PATH --upstream URL`) or restore it from git"


def dump_line(model: BaseModel) -> str:
    """One JSONL line; the same model always gives the same bytes."""
    data = model.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def dumps_tape(tape: Tape) -> str:
    return "".join(dump_line(line) + "\n" for line in (tape.header, *tape.interactions))


def load_tape(path: Path, *, known_secrets: Iterable[str] = ()) -> Tape:
    """Load and check a tape: secrets first (any line), then the header, then every interaction."""
    label = str(path)
    if not path.is_file():
        raise TapeMissing(
            f"no tape at {path}",
            hint="record one with the gateway in record mode, or fix the path (`wt tapes list` shows tapes)",
            tape=label,
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TapeCorrupt(
            f"tape {path} is not UTF-8 (byte {exc.start})", hint=_RERECORD, tape=label, line=None
        ) from exc
    return parse_tape(text, label=label, path=path, known_secrets=known_secrets)


def parse_tape(text: str, *, label: str, path: Path | None = None, known_secrets: Iterable[str] = ()) -> Tape:
    check_secrets(text, label=label, known_secrets=known_secrets)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise TapeCorrupt(
            f"tape {label} is empty: line 1 should be the header", hint=_RERECORD, tape=label, line=1
        )
    header = _header(lines[0], label)
    if len(lines) == 1:  # a recording writes nothing unless it recorded something: this one was cut short
        raise TapeCorrupt(
            f"tape {label} has a header and no interactions: line 2 should be the first recorded request",
            hint=_RERECORD,
            tape=label,
            line=2,
        )
    interactions = tuple(
        _interaction(line, number, label, expected_seq=number - 2)
        for number, line in enumerate(lines[1:], start=2)
    )
    return Tape(header=header, interactions=interactions, path=path)


def check_secrets(text: str, *, label: str, known_secrets: Iterable[str] = ()) -> None:
    hits = SecretScanner(known_secrets).scan(text)
    if hits:
        first = hits[0]
        raise TapeSecretFound(
            f"tape {label} line {first.line} holds a secret ({first.kind}: {first.excerpt})"
            + (f" and {len(hits) - 1} more" if len(hits) > 1 else ""),
            hint="revoke that credential now, delete the tape from history, and re-record it "
            "(the recorder redacts secrets at write time; a secret here was added by hand or by an old tool)",
            tape=label,
            line=first.line,
            kind=first.kind,
        )


def _json(line: str, number: int, label: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TapeCorrupt(
            f"tape {label} line {number} is not JSON: {exc.msg} at column {exc.colno}",
            hint=_RERECORD,
            tape=label,
            line=number,
        ) from exc
    if not isinstance(data, dict):
        raise TapeCorrupt(
            f"tape {label} line {number} is a JSON {type(data).__name__}, expected an object",
            hint=_RERECORD,
            tape=label,
            line=number,
        )
    return data


def _header(line: str, label: str) -> TapeHeader:
    data = _json(line, 1, label)
    if data.get("kind") != "header":
        raise TapeCorrupt(
            f"tape {label} line 1 has kind {data.get('kind')!r}, expected the header",
            hint=_RERECORD,
            tape=label,
            line=1,
        )
    for field, supported in (
        ("schema_version", TAPE_SCHEMA_VERSION),
        ("fingerprint_version", FINGERPRINT_VERSION),
    ):
        if data.get(field) != supported:
            raise TapeCorrupt(
                f"tape {label} has {field} {data.get(field)!r}; this Wind Tunnel reads {supported}",
                hint=f"use the Wind Tunnel version that wrote it, or {_RERECORD}",
                tape=label,
                line=1,
            )
    return _validate(TapeHeader, data, 1, label)


def _interaction(line: str, number: int, label: str, *, expected_seq: int) -> Interaction:
    interaction = _validate(Interaction, _json(line, number, label), number, label)
    if interaction.seq != expected_seq:
        raise TapeCorrupt(
            f"tape {label} line {number} has seq {interaction.seq}, expected {expected_seq}",
            hint="interactions are numbered 0, 1, 2... in file order; " + _RERECORD,
            tape=label,
            line=number,
        )
    return interaction


def _validate(model: type[_M], data: dict[str, Any], number: int, label: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(part) for part in first["loc"]) or "(line)"
        raise TapeCorrupt(
            f"tape {label} line {number}: {where}: {first['msg']} ({exc.error_count()} problem(s))",
            hint=_RERECORD,
            tape=label,
            line=number,
        ) from exc


def write_tape(tape: Tape, path: Path, *, known_secrets: Iterable[str] = (), exclusive: bool = False) -> Tape:
    """Scan, write atomically (temp file then rename), reload and compare; return the reloaded tape.

    `exclusive=True` never replaces an existing file (golden tapes are immutable): the rename becomes a
    hard link, which fails if the name exists.
    """
    known = tuple(known_secrets)
    text = dumps_tape(tape)
    check_secrets(text, label=str(path), known_secrets=known)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            os.link(temp, path)
        else:
            temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
    return _reverify(path, text, known)


def _reverify(path: Path, text: str, known: tuple[str, ...]) -> Tape:
    reloaded = load_tape(path, known_secrets=known)
    if dumps_tape(reloaded) != text:
        raise TapeCorrupt(
            f"tape {path} reads back differently from what was written",
            hint="check the disk and filesystem; then record again",
            tape=str(path),
            line=None,
        )
    return reloaded
