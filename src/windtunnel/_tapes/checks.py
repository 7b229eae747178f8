"""Static checks of a loaded tape: stored fingerprints agree with the recorded requests, golden names agree
with the content."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from windtunnel._tapes.diff import Nearest, json_diff, nearest
from windtunnel._tapes.errors import TapeMismatch
from windtunnel._tapes.fingerprint import fingerprint
from windtunnel._tapes.model import Interaction, Tape
from windtunnel._tapes.policy import rerecord_command

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


def tampered(tape: Tape) -> list[TapeMismatch]:
    """A TapeMismatch for every interaction whose recorded request no longer hashes to its stored fingerprint.

    The request it was recorded for is gone (only its hash is left), so the message diffs the edited request
    against the nearest other recorded requests: a conversation's later requests repeat its earlier turns,
    so the diff points at the changed bytes. It ends with the command that re-records the tape.
    """
    command = rerecord_command(tape)
    found = []
    for interaction, fresh in zip(tape.interactions, recomputed(tape), strict=True):
        if fresh == interaction.fingerprint:
            continue
        seq = interaction.seq
        others = [other for other in tape.interactions if other.seq != seq]
        close = _nearest_history(interaction, others)
        lines = [
            f"tape {tape.label} line {seq + 2} (seq {seq}): the recorded request no longer matches its "
            f"fingerprint (stored {interaction.fingerprint[:12]}, the request on tape hashes to {fresh[:12]}): "
            "the recorded request was changed after recording, so no request the runtime sends can match it"
        ]
        lines += [
            f"  nearest recorded request: {item.render(labels=(f'seq {item.seq} has', f'seq {seq} has'))}"
            for item in close
        ]
        if not close:
            lines.append("  no other recorded request to compare it with")
        lines.append(f"  re-record this tape: {command}")
        found.append(
            TapeMismatch(
                "\n".join(lines),
                hint="restore the tape from git, or re-record it with the command above",
                tape=tape.label,
                fingerprint=interaction.fingerprint,
                nearest=close,
                rerecord_command=command,
            )
        )
    return found


def _nearest_history(edited: Interaction, others: list[Interaction], count: int = 2) -> list[Nearest]:
    """The other requests closest to `edited`, compared over the turns both hold (so a conversation's growth
    is not a difference); when that finds nothing, the edit is in a turn no other request repeats, and the
    whole requests are compared instead."""
    mine = edited.request.model_dump(mode="json", exclude={"headers"})
    scored = []
    for other in others:
        theirs = other.request.model_dump(mode="json", exclude={"headers"})
        changes = json_diff(*_shared_turns(theirs, mine))
        scored.append(Nearest(other.seq, other.fingerprint, tuple(changes)))
    scored = sorted((item for item in scored if item.changes), key=lambda item: (len(item.changes), item.seq))
    return scored[:count] or nearest(mine, others, count)


def _shared_turns(left: dict[str, Any], right: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both requests with `messages` cut to the length of the shorter list."""
    left_messages, right_messages = left["body"].get("messages"), right["body"].get("messages")
    if not isinstance(left_messages, list) or not isinstance(right_messages, list):
        return left, right
    size = min(len(left_messages), len(right_messages))
    cut = [
        {**side, "body": {**side["body"], "messages": messages[:size]}}
        for side, messages in ((left, left_messages), (right, right_messages))
    ]
    return cut[0], cut[1]
