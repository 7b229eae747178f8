"""The lifecycle: verify committed tapes, promote only passing runs to immutable golden tapes, re-record."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._net.server_thread import ServerThread
from windtunnel._score.models import Score, ScoreStatus
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.errors import TapePromotionRefused
from windtunnel._tapes.fingerprint import fingerprint
from windtunnel._tapes.lifecycle import TapeFile, promote, propose_refreshes, verify_tape, verify_tapes
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM, rerecord_command
from windtunnel._tapes.standin import StandinUpstream
from windtunnel._tapes.store import load_tape, write_tape

UPSTREAM = "http://127.0.0.1:9/v1"
PATH = "/v1/chat/completions"
NOW = datetime.now(UTC)


def wt(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `wt` as users do; CI is unset unless given."""
    environment = {key: value for key, value in os.environ.items() if key != "CI"} | env
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )


def run_tape(directory: Path, name: str = "refunds", *, when: datetime = NOW, count: int = 2) -> Path:
    builder = TapeBuilder(name, upstream=UPSTREAM, source_run="run-1", clock=lambda: when)
    for index in range(count):
        body = {"model": "m", "messages": [{"role": "user", "content": f"q{index}"}]}
        builder.add("POST", PATH, body, RecordedResponse(status=200, body={"model": "m-1", "choices": []}))
    path = directory / f"{name}.jsonl"
    write_tape(builder.build(), path)
    return path


def score_file(directory: Path, status: ScoreStatus) -> Path:
    score = Score(run_id="run-42", scenario="s", pack="p", runtime="in_memory", status=status)
    path = directory / f"s.{status.value}.score.json"
    path.write_text(score.model_dump_json(), encoding="utf-8")
    return path


def test_a_good_tape_verifies(tmp_path: Path) -> None:
    check = verify_tape(TapeFile(run_tape(tmp_path), "p"))
    assert check.ok, check.problems
    assert check.tape is not None and len(check.tape.interactions) == 2


def test_verify_reports_each_cause_by_name(tmp_path: Path) -> None:
    corrupt = run_tape(tmp_path, "corrupt")
    corrupt.write_text(corrupt.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    edited = run_tape(tmp_path, "edited")
    edited.write_text(edited.read_text(encoding="utf-8").replace('"q1"', '"q9"'), encoding="utf-8")
    leaky = run_tape(tmp_path, "leaky")
    leaky.write_text(
        leaky.read_text(encoding="utf-8").replace('"q0"', '"AKIAABCDEFGHIJKLMNOP"'), encoding="utf-8"
    )
    checks = verify_tapes([TapeFile(p) for p in (corrupt, edited, leaky, tmp_path / "gone.jsonl")])
    problems = [check.problems[0] for check in checks]
    assert problems[0].startswith("TapeCorrupt:") and "line 4" in problems[0]
    assert problems[1].startswith("TapeCorrupt:") and "recorded request was changed" in problems[1]
    assert problems[2].startswith("TapeSecretFound:") and "aws-access-key" in problems[2]
    assert problems[3].startswith("TapeMissing:")


def test_verify_replays_each_tape_through_replay_mode(tmp_path: Path) -> None:
    # Consistent fingerprints, but one request names another upstream than the tape replays as.
    path = run_tape(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["request"]["upstream"] = "http://elsewhere.test/v1"
    record["fingerprint"] = fingerprint(record["request"])
    path.write_text("\n".join([*lines[:2], json.dumps(record)]) + "\n", encoding="utf-8")
    check = verify_tape(TapeFile(path))
    assert not any("was changed after recording" in problem for problem in check.problems)
    assert check.problems[0].startswith("TapeMismatch: replaying seq 1")
    assert check.problems[1].startswith("TapeUnused:")


def test_stale_tapes_fail_certification_and_warn_in_development(tmp_path: Path) -> None:
    path = run_tape(tmp_path, when=NOW - timedelta(days=40))
    strict = verify_tape(TapeFile(path))
    assert strict.stale and not strict.ok and strict.problems[0].startswith("TapeStale:")
    lenient = verify_tape(TapeFile(path), certification=False)
    assert lenient.ok and lenient.warnings[0].startswith("TapeStale:")
    proposals = propose_refreshes([strict])
    assert proposals[0].command == f"wt tapes rerecord --tape {path} --upstream {UPSTREAM}"


def test_promotion_is_refused_for_a_failing_run(tmp_path: Path) -> None:
    with pytest.raises(TapePromotionRefused, match="did not pass"):
        promote(run_tape(tmp_path), tmp_path / "golden", passed=False)
    assert not (tmp_path / "golden").exists()


def test_promotion_is_refused_for_a_stale_tape(tmp_path: Path) -> None:
    with pytest.raises(TapePromotionRefused, match="stale"):
        promote(run_tape(tmp_path, when=NOW - timedelta(days=31)), tmp_path / "golden", passed=True)


def test_a_golden_tape_is_content_addressed_with_lineage_and_never_overwritten(tmp_path: Path) -> None:
    source = run_tape(tmp_path)
    golden_dir = tmp_path / "pack" / "tapes"
    first = promote(source, golden_dir, passed=True, source_run="run-42")
    assert first.created
    digest = hashlib.sha256(first.path.read_bytes()).hexdigest()
    assert first.path.name == f"refunds-{digest}.jsonl"
    lineage = load_tape(first.path).header.lineage
    assert lineage.source_run == "run-42"
    assert lineage.promoted_at is not None and lineage.promoted_from is not None
    assert lineage.promoted_from.startswith("refunds.jsonl sha256:")
    assert (lineage.requested_models, lineage.reported_models) == (["m"], ["m-1"])
    assert lineage.recorder_version and lineage.fingerprint_version == 1

    again = promote(source, golden_dir, passed=True, source_run="run-43")
    assert (again.path, again.created) == (first.path, False)
    assert hashlib.sha256(first.path.read_bytes()).hexdigest() == digest
    assert verify_tape(TapeFile(first.path)).ok


def test_an_edited_golden_tape_fails_verification(tmp_path: Path) -> None:
    golden = promote(run_tape(tmp_path), tmp_path / "golden", passed=True).path
    golden.write_text(golden.read_text(encoding="utf-8").replace('"m-1"', '"m-2"'), encoding="utf-8")
    check = verify_tape(TapeFile(golden))
    assert any("edited after promotion" in problem for problem in check.problems)


def test_wt_tapes_verify_exits_0_for_good_tapes_and_1_for_a_bad_one(tmp_path: Path) -> None:
    good = run_tape(tmp_path, "good")
    done = wt("tapes", "verify", str(good))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK" in done.stdout
    bad = run_tape(tmp_path, "bad")
    bad.write_text(bad.read_text(encoding="utf-8") + "nope\n", encoding="utf-8")
    done = wt("tapes", "verify", str(tmp_path), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert [entry["ok"] for entry in report] == [False, True]


def test_wt_tapes_promote_needs_a_passing_score(tmp_path: Path) -> None:
    source, golden_dir = run_tape(tmp_path), tmp_path / "golden"
    failed = score_file(tmp_path, ScoreStatus.FAILED)
    refused = wt("tapes", "promote", str(source), "--to", str(golden_dir), "--score", str(failed))
    assert refused.returncode == 1
    assert "TapePromotionRefused" in refused.stderr
    passed = score_file(tmp_path, ScoreStatus.PASSED)
    done = wt("tapes", "promote", str(source), "--to", str(golden_dir), "--score", str(passed))
    assert done.returncode == 0, done.stderr
    (golden,) = golden_dir.iterdir()
    assert load_tape(golden).header.lineage.source_run == "run-42"


def test_rerecord_refuses_in_ci_and_otherwise_proposes_commands_for_stale_tapes(tmp_path: Path) -> None:
    stale = run_tape(tmp_path, when=NOW - timedelta(days=60))
    refused = wt("tapes", "rerecord", "--tape", str(stale), "--upstream", UPSTREAM, CI="true")
    assert refused.returncode == 2
    assert "does not run in CI" in refused.stderr
    pack_dir = tmp_path / "pack"
    (pack_dir / "tapes").mkdir(parents=True)
    stale.rename(pack_dir / "tapes" / stale.name)
    (pack_dir / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        "PACK = Pack(name='p', scenarios=[Scenario(name='s', prompt='hi', target_facts=[['x']])])\n",
        encoding="utf-8",
    )
    done = wt("tapes", "rerecord", "--pack", str(pack_dir))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"wt tapes rerecord --tape {pack_dir / 'tapes' / stale.name} --upstream {UPSTREAM}" in out


def test_rerecord_sends_the_recorded_requests_and_writes_a_fresh_run_tape(tmp_path: Path) -> None:
    old = run_tape(tmp_path, when=NOW - timedelta(days=60), count=3)
    standin = StandinUpstream(api_key="rerecord-key-123456")
    out_dir = tmp_path / "runs"
    with ServerThread(standin.app) as server:
        argv = [
            "tapes",
            "rerecord",
            "--tape",
            str(old),
            "--upstream",
            f"{server.url}/v1",
            "--out",
            str(out_dir),
        ]
        done = wt(*argv, WT_UPSTREAM_API_KEY="rerecord-key-123456")
    assert done.returncode == 0, done.stderr
    assert [r["body"]["messages"][0]["content"] for r in standin.received] == ["q0", "q1", "q2"]
    fresh = load_tape(out_dir / "refunds.jsonl", known_secrets=["rerecord-key-123456"])
    assert len(fresh.interactions) == 3
    assert fresh.header.lineage.source_run == "rerecord of refunds.jsonl"
    assert verify_tape(TapeFile(fresh.path or old)).ok
    assert "wt tapes promote" in done.stdout


def test_promotion_adds_what_the_recording_run_was_to_the_lineage(tmp_path: Path) -> None:
    extra = {"runtime": "reference", "pack": "support_desk", "scenario": "refund", "verdict": "passed"}
    golden = promote(run_tape(tmp_path), tmp_path / "golden", passed=True, lineage=extra).path
    lineage = load_tape(golden).header.lineage
    assert (lineage.runtime, lineage.pack, lineage.scenario, lineage.verdict) == (
        "reference",
        "support_desk",
        "refund",
        "passed",
    )
    assert verify_tape(TapeFile(golden)).ok
    with pytest.raises(ValueError, match="runtime"):
        promote(run_tape(tmp_path, "other"), tmp_path / "golden", passed=True, lineage={"runtime": 3})  # type: ignore[dict-item]


def test_wt_tapes_promote_takes_the_lineage_from_a_single_score(tmp_path: Path) -> None:
    passed = score_file(tmp_path, ScoreStatus.PASSED)
    done = wt(
        "tapes", "promote", str(run_tape(tmp_path)), "--to", str(tmp_path / "g"), "--score", str(passed)
    )
    assert done.returncode == 0, done.stderr
    (golden,) = (tmp_path / "g").iterdir()
    lineage = load_tape(golden).header.lineage
    assert (lineage.runtime, lineage.pack, lineage.scenario, lineage.verdict) == (
        "in_memory",
        "p",
        "s",
        "passed",
    )


def test_a_tape_that_names_its_scenario_is_rerecorded_by_running_the_scenario_again(tmp_path: Path) -> None:
    scripted = {"runtime": "reference", "pack": "support_desk", "scenario": "refund", "verdict": "passed"}
    tape = load_tape(run_tape(tmp_path))
    assert (
        rerecord_command(tape)
        == f"wt tapes rerecord --tape {tmp_path / 'refunds.jsonl'} --upstream {UPSTREAM}"
    )
    golden = load_tape(
        promote(tmp_path / "refunds.jsonl", tmp_path / "g", passed=True, lineage=scripted).path
    )
    assert rerecord_command(golden) == (
        f"wt tapes record --runtime reference --pack support_desk --scenario refund --upstream {UPSTREAM} "
        "--out runs/tapes"
    )
    builder = TapeBuilder("t", upstream=SCRIPTED_UPSTREAM, clock=lambda: NOW)
    builder.add("POST", PATH, {"model": "m", "messages": []}, RecordedResponse(status=200, body={}))
    write_tape(builder.build(), tmp_path / "t.jsonl")
    from_standin = promote(tmp_path / "t.jsonl", tmp_path / "g", passed=True, lineage=scripted).path
    assert rerecord_command(load_tape(from_standin)).endswith(
        "--scenario refund --scripted-upstream --out runs/tapes"
    )
