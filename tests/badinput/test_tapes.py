"""Bad tapes for `wt tapes verify PATH`: corrupt lines, wrong types and versions, edited requests and
fingerprints, secrets, dates in the future, stale live tapes, tampered golden names. Each is exit 1 with a
FAILED line and the tape's first problem on one line naming the file, the line and the cause."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.badinput.runner import wt
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.store import dumps_tape

LIVE = "https://api.example.test/v1"
Lines = list[dict[str, Any]]
Edit = Callable[[Lines], None]


def recorded(days_ago: float = 1.0, upstream: str = LIVE) -> str:
    """A sound two-call tape recorded `days_ago` through the real TapeBuilder."""
    when = datetime.now(UTC) - timedelta(days=days_ago)
    builder = TapeBuilder("corpus", upstream=upstream, clock=lambda: when)
    for turn in range(2):
        body = {"model": "small", "messages": [{"role": "user", "content": f"turn {turn}"}]}
        answer = {
            "id": f"c{turn}",
            "object": "chat.completion",
            "model": "small",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"answer {turn}"},
                    "finish_reason": "stop",
                }
            ],
        }
        builder.add("POST", "/v1/chat/completions", body, RecordedResponse(status=200, body=answer))
    return dumps_tape(builder.build())


def parsed(text: str) -> Lines:
    return [json.loads(line) for line in text.splitlines()]


def header(change: Callable[[dict[str, Any]], None]) -> Edit:
    return lambda lines: change(lines[0])


def interaction(change: Callable[[dict[str, Any]], None], index: int = 1) -> Edit:
    return lambda lines: change(lines[index])


def lineage(**fields: Any) -> Edit:
    return lambda lines: lines[0]["lineage"].update(fields)


def _step(data: Any, part: str) -> Any:
    return data[int(part)] if isinstance(data, list) else data[part]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set a dotted path ("response.body.choices.0"); a number steps into a list."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = _step(target, part)
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _drop(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(name)


FUTURE = "2999-01-01T00:00:00Z"
SK = "sk-" + "a1B2" * 12
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
GH = "ghp_" + "x1Y2" * 10

# (id, edit of the parsed lines, expected text of the first problem line)
EDITS: list[tuple[str, Edit, str]] = [
    (
        "header kind",
        header(_set("kind", "interaction")),
        "line 1 has kind 'interaction', expected the header",
    ),
    ("schema version", header(_set("schema_version", 2)), "has schema_version 2; this Wind Tunnel reads 1"),
    ("fingerprint version", header(_set("fingerprint_version", 9)), "has fingerprint_version 9"),
    ("header without tape", header(_drop("tape")), "line 1: tape: Field required"),
    ("header extra field", header(_set("colour", "red")), "line 1: colour: Extra inputs are not permitted"),
    ("header naive date", header(_set("recorded_at", "2026-01-01T00:00:00")), "line 1: recorded_at"),
    ("header date words", header(_set("recorded_at", "last tuesday")), "line 1: recorded_at"),
    ("lineage not object", header(_set("lineage", [])), "line 1: lineage"),
    ("lineage extra", lineage(secret_sauce=True), "lineage/secret_sauce: Extra inputs are not permitted"),
    ("lineage scripted word", lineage(scripted="maybe"), "lineage/scripted"),
    ("lineage models not list", lineage(requested_models="small"), "lineage/requested_models"),
    ("seq gap", interaction(_set("seq", 5)), "line 2 has seq 5, expected 0"),
    ("seq negative", interaction(_set("seq", -1)), "line 2: seq: Input should be greater than or equal to 0"),
    ("seq twice", interaction(_set("seq", 0), index=2), "line 3 has seq 0, expected 1"),
    (
        "fingerprint not hex",
        interaction(_set("fingerprint", "xyz")),
        "line 2: fingerprint: String should match pattern",
    ),
    ("fingerprint edited", interaction(_set("fingerprint", "0" * 64)), "TapeMismatch: tape"),
    (
        "request edited",
        interaction(_set("request.body.messages", [{"role": "user", "content": "edited"}])),
        "TapeMismatch: tape",
    ),
    (
        "request model edited",
        interaction(_set("request.body.model", "large")),
        "the recorded request no longer matches its fingerprint",
    ),
    (
        "response body and events",
        interaction(_set("response.events", [])),
        "exactly one of body (JSON) or events (stream)",
    ),
    (
        "response neither",
        interaction(lambda d: d["response"].pop("body")),
        "exactly one of body (JSON) or events (stream)",
    ),
    ("response status word", interaction(_set("response.status", "ok")), "line 2: response/status"),
    ("interaction extra", interaction(_set("note", "x")), "line 2: note: Extra inputs are not permitted"),
    ("interaction without response", interaction(_drop("response")), "line 2: response: Field required"),
    ("interaction kind header", interaction(_set("kind", "header")), "line 2: kind"),
    ("interaction naive date", interaction(_set("recorded_at", "2026-01-01 00:00")), "line 2: recorded_at"),
    (
        "openai key in an answer",
        interaction(_set("response.body.choices.0", {"leak": SK})),
        "holds a secret (openai-key",
    ),
    ("aws key in a request", interaction(_set("request.body.user", AWS)), "holds a secret (aws-access-key"),
    (
        "github token in a header",
        interaction(_set("request.headers", {"x-token": GH})),
        "holds a secret (github-token",
    ),
    (
        "bearer token",
        interaction(_set("response.headers", {"www": "Bearer abcDEF1234567890xyzQ"})),
        "holds a secret (bearer-token",
    ),
    (
        "private key block",
        interaction(_set("response.body.id", "-----BEGIN PRIVATE KEY-----")),
        "holds a secret (private-key",
    ),
    ("header dated in the future", header(_set("recorded_at", FUTURE)), "is dated in the future"),
    (
        "interaction dated in the future",
        interaction(_set("recorded_at", FUTURE), index=2),
        "is dated in the future",
    ),
    ("promoted in the future", lineage(promoted_at=FUTURE), "is dated in the future"),
]


RAW: list[tuple[str, Callable[[str], bytes], str]] = [
    ("empty file", lambda text: b"", "is empty: line 1 should be the header"),
    (
        "header only",
        lambda text: text.split("\n", 1)[0].encode() + b"\n",
        "has a header and no interactions: line 2 should be the first recorded request",
    ),
    ("not utf-8", lambda text: text.encode() + b"\xff\xfe", "is not UTF-8"),
    ("header not json", lambda text: b"{header\n" + text.split("\n", 1)[1].encode(), "line 1 is not JSON"),
    (
        "header an array",
        lambda text: b"[]\n" + text.split("\n", 1)[1].encode(),
        "line 1 is a JSON list, expected an object",
    ),
    ("trailing garbage", lambda text: (text + "garbage\n").encode(), "line 4 is not JSON"),
    ("blank line inside", lambda text: text.replace("\n", "\n\n", 1).encode(), "line 2 is not JSON"),
    ("a number line", lambda text: (text + "42\n").encode(), "line 4 is a JSON int, expected an object"),
    ("windows newlines", lambda text: text.replace("\n", "\r\n").encode(), ""),
]


def test_the_base_tape_is_sound(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(recorded())
    outcome = wt(["tapes", "verify", str(path)], cwd=tmp_path)
    assert outcome.code == 0 and outcome.stdout.startswith("OK "), outcome.stdout + outcome.stderr


@pytest.mark.parametrize(("name", "edit", "expect"), EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_tape_fails_in_one_line(tmp_path: Path, name: str, edit: Edit, expect: str) -> None:
    lines = parsed(recorded())
    edit(lines)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    wt(["tapes", "verify", str(path)], cwd=tmp_path).failed_tape(expect)


@pytest.mark.parametrize(("name", "make", "expect"), RAW, ids=[r[0] for r in RAW])
def test_a_broken_file_fails_in_one_line(
    tmp_path: Path, name: str, make: Callable[[str], bytes], expect: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(make(recorded()))
    outcome = wt(["tapes", "verify", str(path)], cwd=tmp_path)
    if not expect:  # CRLF lines are still JSON lines: this one must verify (a control, not a refusal)
        assert outcome.code == 0, outcome.stdout
        return
    outcome.failed_tape(expect)


def test_a_stale_live_tape_fails_and_names_the_re_record_command(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(recorded(days_ago=40))
    wt(["tapes", "verify", str(path)], cwd=tmp_path).failed_tape("TapeStale: tape")


def test_a_missing_tape_fails_in_one_line(tmp_path: Path) -> None:
    wt(["tapes", "verify", str(tmp_path / "absent.jsonl")], cwd=tmp_path).failed_tape(
        "TapeMissing: no tape at"
    )


def test_a_golden_tape_edited_after_promotion_fails(tmp_path: Path) -> None:
    text = recorded()
    path = tmp_path / f"corpus-{'ab' * 32}.jsonl"  # the name claims a digest the bytes do not have
    path.write_text(text)
    wt(["tapes", "verify", str(path)], cwd=tmp_path).failed_tape("was edited after promotion")
