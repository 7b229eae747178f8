"""Static checks of a loaded tape: stored fingerprints agree with the recorded requests, golden names agree
with the content."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from windtunnel._tapes.fingerprint import fingerprint
from windtunnel._tapes.model import Tape

GOLDEN_NAME = re.compile(r"^(?P<tape>.+)-(?P<digest>[0-9a-f]{64})\.jsonl$")
"""Golden tapes are named `<tape>-<sha256 of the file's bytes>.jsonl`."""


def recomputed(tape: Tape) -> list[str]:
    """Fingerprints recomputed from the recorded requests, in interaction order."""
    return [fingerprint(i.request.model_dump(mode="json")) for i in tape.interactions]


def fingerprint_problems(tape: Tape) -> list[str]:
    """One line per interaction whose stored fingerprint differs from its recorded request's."""
    return [
        f"line {i.seq + 2} (seq {i.seq}): stored fingerprint {i.fingerprint[:12]}, recomputed {fresh[:12]}: "
        "the recorded request was changed after recording"
        for i, fresh in zip(tape.interactions, recomputed(tape), strict=True)
        if fresh != i.fingerprint
    ]


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def golden_problems(path: Path) -> list[str]:
    """For a content-addressed (golden) file name: does the digest in the name match the bytes?"""
    named = GOLDEN_NAME.match(path.name)
    if named is None:
        return []
    actual = file_digest(path)
    if actual == named["digest"]:
        return []
    return [
        f"golden tape {path.name} was edited after promotion: its name says sha256 {named['digest'][:12]}, "
        f"its content hashes to {actual[:12]} (golden tapes are immutable; promote a new one instead)"
    ]
