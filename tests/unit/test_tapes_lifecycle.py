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

from tests.standin_upstream import StandinUpstream
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel._score.models import Score, ScoreStatus
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.errors import TapePromotionRefused
from windtunnel._tapes.fingerprint import fingerprint
from windtunnel._tapes.lifecycle import (
    TapeFile,
    committed_tapes,
    find_tapes,
    propose_refreshes,
    verify_tape,
    verify_tapes,
)
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM, rerecord_command
from windtunnel._tapes.promotion import promote
from windtunnel._tapes.store import load_tape, write_tape

UPSTREAM = "http://127.0.0.1:9/v1"
PATH = "/v1/chat/completions"
NOW = datetime.now(UTC)
RUN = {"runtime": "in_memory", "pack": "p", "scenario": "s"}
"""What run_tape's lineage names, and score() scores by default."""


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


def run_tape(
    directory: Path,
    name: str = "refunds",
    *,
    when: datetime = NOW,
    count: int = 2,
    source_run: str | None = None,
    lineage: dict[str, str] | None = None,
) -> Path:
    builder = TapeBuilder(
        name,
        upstream=UPSTREAM,
        source_run=source_run,
        clock=lambda: when,
        lineage=RUN if lineage is None else lineage,
    )
    for index in range(count):
        body = {"model": "m", "messages": [{"role": "user", "content": f"q{index}"}]}
        builder.add("POST", PATH, body, RecordedResponse(status=200, body={"model": "m-1", "choices": []}))
    path = directory / f"{name}.jsonl"
    write_tape(builder.build(), path)
    return path


def score(status: ScoreStatus = ScoreStatus.PASSED, *, run_id: str = "run-42", **named: str) -> Score:
    return Score.model_validate({"run_id": run_id, "status": status, **RUN, **named})


def score_file(directory: Path, status: ScoreStatus, **named: str) -> Path:
    path = directory / f"s.{status.value}.{len(list(directory.glob('*.score.json')))}.score.json"
    path.write_text(score(status, **named).model_dump_json(), encoding="utf-8")
    return path


def test_a_good_tape_verifies(tmp_path: Path) -> None:
    check = verify_tape(TapeFile(run_tape(tmp_path), "p", "in_memory"))
    assert check.ok, check.problems
    assert check.tape is not None and len(check.tape.interactions) == 2


def test_verify_and_the_tape_stage_agree_on_where_committed_tapes_live(tmp_path: Path) -> None:
    tape = run_tape(tmp_path / "run")
    pack_dir = write_pack(tmp_path, tape)
    loose = pack_dir / "tapes" / "loose.jsonl"
    loose.write_bytes(tape.read_bytes())
    (pack_dir / "tapes" / "reference").mkdir()
    elsewhere = pack_dir / "tapes" / "reference" / tape.name
    elsewhere.write_bytes(tape.read_bytes())
    pack = load_pack(str(pack_dir))
    found = find_tapes([pack])
    assert [(f.path, f.runtime) for f in found] == [
        (pack_dir / "tapes" / "in_memory" / tape.name, "in_memory"),
        (loose, None),
        (elsewhere, "reference"),
    ]
    assert [f.path for f in committed_tapes([pack], "in_memory")] == [found[0].path]
    assert [f.path for f in committed_tapes([pack], "reference")] == [elsewhere]
    ok, checks = verify_tape(found[0]), verify_tapes(found[1:])
    assert ok.ok, ok.problems
    assert checks[0].problems == [
        f"misplaced: {loose} is not in a runtime directory, so the tape stage never replays it; committed "
        "tapes live in <pack>/tapes/<runtime>/ (move it into tapes/in_memory/)"
    ]
    assert (
        checks[1]
        .problems[0]
        .startswith(
            "misplaced: the tape was recorded through runtime 'in_memory' but sits in tapes/reference/"
        )
    )
    done = wt("tapes", "verify", "--pack", str(pack_dir))
    assert done.returncode == 1 and "misplaced:" in done.stdout


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
    assert problems[1].startswith("TapeMismatch:") and "recorded request was changed" in problems[1]
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
    path = run_tape(tmp_path, when=NOW - timedelta(days=40), lineage={})
    strict = verify_tape(TapeFile(path))
    assert strict.stale and not strict.ok and strict.problems[0].startswith("TapeStale:")
    lenient = verify_tape(TapeFile(path), certification=False)
    assert lenient.ok and lenient.warnings[0].startswith("TapeStale:")
    proposals = propose_refreshes([strict])
    assert proposals[0].command == f"wt tapes rerecord --tape {path} --upstream {UPSTREAM}"


def test_promotion_is_refused_for_a_failing_run(tmp_path: Path) -> None:
    with pytest.raises(TapePromotionRefused, match="did not pass"):
        promote(run_tape(tmp_path), tmp_path / "golden", scores=[score(ScoreStatus.FAILED)])
    with pytest.raises(TapePromotionRefused, match="did not pass"):
        promote(run_tape(tmp_path), tmp_path / "golden", scores=[])
    assert not (tmp_path / "golden").exists()


def test_promotion_is_refused_for_a_stale_tape(tmp_path: Path) -> None:
    with pytest.raises(TapePromotionRefused, match="stale"):
        promote(run_tape(tmp_path, when=NOW - timedelta(days=31)), tmp_path / "golden", scores=[score()])


def test_a_golden_tape_is_content_addressed_with_lineage_and_never_overwritten(tmp_path: Path) -> None:
    source = run_tape(tmp_path)
    golden_dir = tmp_path / "pack" / "tapes"
    first = promote(source, golden_dir, scores=[score()])
    assert first.created
    digest = hashlib.sha256(first.path.read_bytes()).hexdigest()
    assert first.path.name == f"refunds-{digest}.jsonl"
    lineage = load_tape(first.path).header.lineage
    assert lineage.source_run == "run-42"
    assert lineage.promoted_at is not None and lineage.promoted_from is not None
    assert lineage.promoted_from.startswith("refunds.jsonl sha256:")
    assert (lineage.requested_models, lineage.reported_models) == (["m"], ["m-1"])
    assert lineage.recorder_version and lineage.fingerprint_version == 1

    again = promote(source, golden_dir, scores=[score(run_id="run-43")])
    assert (again.path, again.created) == (first.path, False)
    assert hashlib.sha256(first.path.read_bytes()).hexdigest() == digest
    assert verify_tape(TapeFile(first.path)).ok


def test_an_edited_golden_tape_fails_verification(tmp_path: Path) -> None:
    golden = promote(run_tape(tmp_path), tmp_path / "golden", scores=[score()]).path
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


@pytest.mark.parametrize(
    ("tape_names", "score_names", "why"),
    [
        ({"source_run": "run-7"}, {}, "the tape was recorded by run run-7, the scores are of run run-42"),
        ({"pack": "other"}, {}, "the tape names pack 'other', the score names 'p'"),
        (
            {"scenario": "refund"},
            {"scenario": "refuse"},
            "the tape names scenario 'refund', the score names 'refuse'",
        ),
        ({"runtime": "reference"}, {}, "the tape names runtime 'reference', the score names 'in_memory'"),
        ({}, {}, "the tape names no run"),
    ],
)
def test_wt_tapes_promote_refuses_a_score_of_another_run(
    tmp_path: Path, tape_names: dict[str, str], score_names: dict[str, str], why: str
) -> None:
    source_run = tape_names.pop("source_run", None)
    source = run_tape(tmp_path, source_run=source_run, lineage=tape_names)
    passed = score_file(tmp_path, ScoreStatus.PASSED, **score_names)
    refused = wt("tapes", "promote", str(source), "--to", str(tmp_path / "golden"), "--score", str(passed))
    assert refused.returncode == 1
    assert f"TapePromotionRefused: refusing to promote {source} with these scores: " in refused.stderr
    assert why in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "golden").exists()


def test_a_score_of_the_run_the_tape_names_is_tied_to_it(tmp_path: Path) -> None:
    source = run_tape(tmp_path, source_run="run-1,run-2", lineage={"pack": "p"})
    both = [score(run_id="run-1", scenario="a"), score(run_id="run-2", scenario="b")]
    golden = load_tape(promote(source, tmp_path / "g", scores=both).path)
    assert golden.header.lineage.source_run == "run-1,run-2"
    assert golden.header.lineage.scenario is None  # several scores name no single scenario
    with pytest.raises(
        TapePromotionRefused, match="recorded by run run-1, run-2, the scores are of run run-1"
    ):
        promote(source, tmp_path / "g2", scores=both[:1])


def test_promotion_retires_older_golden_tapes_of_the_same_run(tmp_path: Path) -> None:
    golden_dir = tmp_path / "pack" / "tapes" / "in_memory"
    older = promote(run_tape(tmp_path, "old-name", count=1), golden_dir, scores=[score()]).path
    same_name = promote(run_tape(tmp_path / "b", count=3), golden_dir, scores=[score()]).path
    other = promote(
        run_tape(tmp_path / "c", "other", lineage=RUN | {"scenario": "s2"}),
        golden_dir,
        scores=[score(scenario="s2")],
    ).path
    assert not older.exists()  # same runtime, pack and scenario, another name
    newest = promote(run_tape(tmp_path / "d"), golden_dir, scores=[score()])
    assert newest.created and newest.superseded == (same_name,)
    assert sorted(golden_dir.iterdir()) == sorted([newest.path, other])
    passed = score_file(tmp_path, ScoreStatus.PASSED)
    done = wt(
        "tapes",
        "promote",
        str(run_tape(tmp_path / "e", count=4)),
        "--to",
        str(golden_dir),
        "--score",
        str(passed),
    )
    assert done.returncode == 0, done.stderr
    assert f"wt: superseded {newest.path}" in done.stdout
    assert other.exists()


def test_rerecord_lists_proposals_in_ci_but_refuses_to_rerecord_there(tmp_path: Path) -> None:
    stale = run_tape(tmp_path, when=NOW - timedelta(days=60), lineage={})
    refused = wt("tapes", "rerecord", "--tape", str(stale), "--upstream", UPSTREAM, CI="true")
    assert refused.returncode == 2
    assert "wt tapes rerecord --tape does not run in CI" in refused.stderr
    pack_dir = tmp_path / "pack"
    (pack_dir / "tapes" / "in_memory").mkdir(parents=True)
    stale.rename(pack_dir / "tapes" / "in_memory" / stale.name)
    (pack_dir / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        "PACK = Pack(name='p', scenarios=[Scenario(name='s', prompt='hi', target_facts=[['x']])])\n",
        encoding="utf-8",
    )
    for ci in ("true", "false"):
        done = wt("tapes", "rerecord", "--pack", str(pack_dir), CI=ci)
        assert done.returncode == 0, done.stderr
        path = pack_dir / "tapes" / "in_memory" / stale.name
        assert f"# {path} (stale)\nwt tapes rerecord --tape {path} --upstream {UPSTREAM}" in done.stdout


def test_tapes_close_to_going_stale_are_warned_about_and_proposed(tmp_path: Path) -> None:
    soon = run_tape(tmp_path, "soon", when=NOW - timedelta(days=25), lineage={})
    fresh = run_tape(tmp_path, "fresh", when=NOW - timedelta(days=1), lineage={})
    check = verify_tape(TapeFile(soon), clock=lambda: NOW)
    assert check.ok and check.expiring and not check.stale
    assert check.expires_at == load_tape(soon).oldest + timedelta(days=30)
    (warning,) = check.warnings
    assert warning.startswith(f"expiring soon: tape {soon} goes stale at ") and "in 5.0 days" in warning
    assert "Re-record it now: wt tapes rerecord --tape" in warning
    assert not verify_tape(TapeFile(soon), clock=lambda: NOW, expiring_within=timedelta(days=3)).warnings
    assert not verify_tape(TapeFile(fresh), clock=lambda: NOW).warnings
    (proposal,) = propose_refreshes(verify_tapes([TapeFile(soon), TapeFile(fresh)], clock=lambda: NOW))
    assert proposal.path == soon and proposal.reason.startswith("goes stale at ")

    verified = wt("tapes", "verify", str(soon), str(fresh))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "warning: expiring soon: tape" in verified.stdout and "in 5.0 days" in verified.stdout
    quiet = wt("tapes", "verify", str(soon), "--expiring-within", "2")
    assert quiet.returncode == 0 and "expiring soon" not in quiet.stdout
    listed = wt("tapes", "list", "--pack", str(write_pack(tmp_path, soon)))
    assert listed.returncode == 0, listed.stderr
    assert "EXPIRING SOON" in listed.stdout
    assert "wt: warning: expiring soon: tape" in listed.stderr
    report = json.loads(wt("tapes", "verify", str(soon), "--format", "json").stdout)
    assert report[0]["expiring"] is True and report[0]["expires_at"].startswith(
        f"{check.expires_at:%Y-%m-%d}"
    )
    bad = wt("tapes", "verify", str(soon), "--expiring-within", "soon")
    assert bad.returncode == 2 and "is not a number of days" in bad.stderr


def write_pack(root: Path, *tapes: Path, runtime: str | None = "in_memory") -> Path:
    """A pack directory holding `tapes` in tapes/<runtime>/ (directly in tapes/ with runtime None)."""
    pack_dir = root / "pack"
    directory = pack_dir / "tapes" / runtime if runtime else pack_dir / "tapes"
    directory.mkdir(parents=True, exist_ok=True)
    for tape in tapes:
        (directory / tape.name).write_bytes(tape.read_bytes())
    (pack_dir / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        "PACK = Pack(name='p', scenarios=[Scenario(name='s', prompt='hi', target_facts=[['x']])])\n",
        encoding="utf-8",
    )
    return pack_dir


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
    lineage = fresh.header.lineage
    assert lineage.source_run is None  # no run recorded it: the requests were re-sent
    assert (lineage.runtime, lineage.pack, lineage.scenario) == ("in_memory", "p", "s")
    assert verify_tape(TapeFile(fresh.path or old)).ok
    assert "wt tapes promote" in done.stdout


def test_promotion_adds_what_the_recording_run_was_to_the_lineage(tmp_path: Path) -> None:
    source = run_tape(tmp_path, lineage={})
    with pytest.raises(TapePromotionRefused, match="names no run"):
        promote(source, tmp_path / "golden", scores=[score()])
    recorded = {"runtime": "reference", "pack": "support_desk", "scenario": "refund"}
    golden = promote(
        run_tape(tmp_path, lineage=recorded),
        tmp_path / "golden",
        scores=[score(ScoreStatus.PASSED, **recorded)],
    ).path
    lineage = load_tape(golden).header.lineage
    assert (lineage.runtime, lineage.pack, lineage.scenario, lineage.verdict, lineage.source_run) == (
        "reference",
        "support_desk",
        "refund",
        "passed",
        "run-42",
    )
    assert verify_tape(TapeFile(golden)).ok


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
    scripted = {"runtime": "reference", "pack": "support_desk", "scenario": "refund"}
    tape = load_tape(run_tape(tmp_path, lineage={}))
    assert (
        rerecord_command(tape)
        == f"wt tapes rerecord --tape {tmp_path / 'refunds.jsonl'} --upstream {UPSTREAM}"
    )
    source = run_tape(tmp_path, lineage=scripted)
    golden = load_tape(promote(source, tmp_path / "g", scores=[score(ScoreStatus.PASSED, **scripted)]).path)
    assert rerecord_command(golden) == (
        f"wt tapes record --runtime reference --pack support_desk --scenario refund --upstream {UPSTREAM} "
        "--out runs/tapes"
    )
    builder = TapeBuilder("t", upstream=SCRIPTED_UPSTREAM, clock=lambda: NOW, lineage=scripted)
    builder.add("POST", PATH, {"model": "m", "messages": []}, RecordedResponse(status=200, body={}))
    write_tape(builder.build(), tmp_path / "t.jsonl")
    from_standin = promote(
        tmp_path / "t.jsonl", tmp_path / "g", scores=[score(ScoreStatus.PASSED, **scripted)]
    ).path
    assert rerecord_command(load_tape(from_standin)).endswith(
        "--scenario refund --scripted-upstream --out runs/tapes"
    )


REPO = Path(__file__).resolve().parents[2]
RERECORD_MUG = (
    "wt tapes record --runtime reference --pack support_desk --scenario refund_damaged_item "
    "--scripted-upstream --out runs/tapes"
)


def test_wt_tapes_verify_gives_a_poison_tape_the_mismatch_the_diff_and_the_rerecord_command(
    tmp_path: Path,
) -> None:
    (committed,) = (REPO / "scenarios" / "support_desk" / "tapes" / "reference").glob(
        "support_desk.refund_damaged_item.reference-*.jsonl"
    )
    raw = committed.read_bytes()
    position = raw.index(b"the mug in it was broken") + len("the m")  # one byte of the first request
    poison = tmp_path / committed.name
    poison.write_bytes(raw[:position] + b"o" + raw[position + 1 :])
    # --development: this test is about the edit, so the real clock's view of the tape's age must not matter.
    done = wt("tapes", "verify", str(poison), "--development")
    assert done.returncode == 1, done.stdout
    text = done.stdout
    assert (
        f"TapeMismatch: tape {poison} line 2 (seq 0): the recorded request no longer matches its fingerprint"
        in text
    )
    assert "the recorded request was changed after recording" in text
    assert "nearest recorded request: seq 1 (fingerprint " in text and "1 difference(s):" in text
    assert '/body/messages/1/content: seq 1 has …"42 arrived and the mug in it' in text
    assert 'seq 0 has …"42 arrived and the mog in it' in text
    assert f"re-record this tape: {RERECORD_MUG}" in text
    assert "edited after promotion" in text  # its name no longer matches its bytes either

    lines = raw.decode("utf-8").splitlines(keepends=True)
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text(lines[0] + lines[1][:-20] + "\n" + "".join(lines[2:]), encoding="utf-8")
    broken = wt("tapes", "verify", str(corrupt), "--development")
    assert broken.returncode == 1
    assert f"TapeCorrupt: tape {corrupt} line 2 is not JSON" in broken.stdout
    assert "TapeMismatch" not in broken.stdout
