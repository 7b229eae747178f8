"""Tapes end to end through containers: committed tapes replay through the reference runtime, broken ones fail
with their own error, `wt tapes record` records and promotes, and `wt certify` runs the tapes stage.

Nothing is mocked: real images, the gateway container in replay or record mode with the tape mounted, the
pack's MCP mock containers, the reference runtime container. Every container carries this pytest
session's label, and the session fixture fails if any outlives it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._tapes.containers import RuntimeImages
from windtunnel._tapes.policy import utcnow
from windtunnel._tapes.recording import runtime_images
from windtunnel._tapes.stage import TapeReplay, replay_tape
from windtunnel._tapes.store import load_tape

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
RERECORD = "wt tapes record --runtime reference --pack support_desk --scenario refund_damaged_item --scripted-upstream"


@pytest.fixture(scope="module")
def env(docker_client: object, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@pytest.fixture(scope="module")
def images(env: dict[str, str]) -> RuntimeImages:
    return runtime_images("reference", env)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(str(SUPPORT_DESK))


@pytest.fixture(scope="module")
def committed() -> Path:
    """The committed golden tape of refund_damaged_item through the reference runtime."""
    (path,) = (SUPPORT_DESK / "tapes" / "reference").glob(
        "support_desk.refund_damaged_item.reference-*.jsonl"
    )
    return path


def replay(images: RuntimeImages, pack: Pack, path: Path, tmp_path: Path, **options: object) -> TapeReplay:
    options.setdefault("clock", utcnow)
    return replay_tape(
        images,
        pack,
        path,
        runtime_name="reference",
        out_dir=tmp_path / "traces",
        **options,  # type: ignore[arg-type]
    )


def test_a_committed_tape_replays_through_the_reference_runtime(
    images: RuntimeImages, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    result = replay(images, pack, committed, tmp_path)
    assert result.ok, result.detail()
    assert result.fidelity is not None
    assert (result.fidelity.recorded, result.fidelity.requested, result.fidelity.matched) == (3, 3, 3)
    assert result.gateway is not None
    assert [request["seq"] for request in result.gateway["requests"]] == [0, 1, 2]
    assert (result.gateway["consumed"], result.gateway["unused"], result.gateway["refusals"]) == (3, [], [])
    assert result.replayed_verdict == "passed" == load_tape(committed).header.lineage.verdict
    assert result.result is not None
    assert [call["name"] for call in result.result.trace.mcp_calls or []] == ["lookup_order", "issue_refund"]
    assert "3/3 interaction(s) replayed in order" in result.detail()
    assert list((tmp_path / "traces").rglob("*.trace.json"))


def test_a_poison_tape_fails_with_the_mismatch_diff_and_the_rerecord_command(
    images: RuntimeImages, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    raw = committed.read_bytes()
    position = raw.index(b"the mug in it was broken") + len("the m")  # one byte of the first request
    poison = tmp_path / "poison.jsonl"
    poison.write_bytes(raw[:position] + b"o" + raw[position + 1 :])
    result = replay(images, pack, poison, tmp_path)
    assert not result.ok
    text = result.detail()
    assert f"TapeMismatch: tape {poison}: no recorded request matches" in text
    assert '/body/messages/1/content: recorded …"42 arrived and the mog in it' in text
    assert 'requested …"42 arrived and the mug in it' in text
    assert f"re-record this tape: {RERECORD}" in text
    assert "the recorded request was changed after recording" in text  # the static check saw it too
    assert "verdict differs: recorded 'passed', replayed 'error'" in text
    assert result.gateway is not None and result.gateway["consumed"] == 0


def test_an_exhausted_tape_fails_with_recorded_and_requested_counts(
    images: RuntimeImages, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    lines = committed.read_text(encoding="utf-8").splitlines(keepends=True)
    short = tmp_path / "short.jsonl"
    short.write_text("".join(lines[:-1]), encoding="utf-8")
    result = replay(images, pack, short, tmp_path)
    assert not result.ok
    text = result.detail()
    assert "TapeExhausted: tape" in text
    assert "all 2 recorded interaction(s) were served" in text and "recorded 2, requested 3" in text
    assert RERECORD in text
    assert result.gateway is not None and result.gateway["consumed"] == 2


def test_a_stale_tape_fails_certification_and_only_warns_in_development(
    images: RuntimeImages, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    later = load_tape(committed).oldest + timedelta(days=31)
    certified = replay(images, pack, committed, tmp_path, clock=lambda: later)
    assert not certified.ok
    assert certified.problems[0].startswith("TapeStale: tape ")
    assert "31.0 days ago; the limit is 30 days" in certified.problems[0]
    assert certified.result is None  # a stale tape certifies nothing, so it is not replayed
    assert RERECORD in certified.detail()
    developing = replay(images, pack, committed, tmp_path, clock=lambda: later, certification=False)
    assert developing.ok, developing.detail()
    assert "is stale" in developing.warnings[0] and "warning: TapeStale" in developing.detail()


def wt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def test_wt_tapes_record_promotes_a_passing_run_and_its_tape_replays(
    env: dict[str, str], images: RuntimeImages, tmp_path: Path
) -> None:
    copy = tmp_path / "support_desk"
    shutil.copytree(SUPPORT_DESK, copy, ignore=shutil.ignore_patterns("tapes", "__pycache__"))
    done = wt(
        env,
        *("tapes", "record", "--runtime", "reference", "--pack", str(copy)),
        *("--scenario", "refuse_outside_window", "--scripted-upstream", "--out", str(tmp_path / "runs")),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (golden,) = (copy / "tapes" / "reference").iterdir()
    assert f"OK     support_desk/refuse_outside_window: promoted {golden}" in done.stdout
    tape = load_tape(golden)
    lineage = tape.header.lineage
    assert (lineage.runtime, lineage.pack, lineage.scenario, lineage.verdict) == (
        "reference",
        "support_desk",
        "refuse_outside_window",
        "passed",
    )
    assert lineage.upstream == "http://scripted-upstream:8000/v1"
    assert (lineage.requested_models, lineage.reported_models) == (["wt-scripted"], ["wt-scripted"])
    assert lineage.promoted_at is not None and lineage.source_run
    assert len(tape.interactions) == 2
    run_tape = (
        tmp_path / "runs" / "reference" / "tapes" / "support_desk.refuse_outside_window.reference.jsonl"
    )
    assert run_tape.is_file()
    assert wt(env, "tapes", "verify", str(golden)).returncode == 0
    result = replay(images, load_pack(str(copy)), golden, tmp_path)
    assert result.ok, result.detail()


def test_wt_certify_replays_the_committed_tapes_and_indexes_them(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    done = wt(env, "certify", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    checks = json.loads((out / "checks.json").read_text(encoding="utf-8"))["checks"]
    tapes = {check["id"]: check for check in checks if check["stage"] == "tapes"}
    committed = sorted((REPO / "scenarios").glob("*/tapes/reference/*.jsonl"))
    assert len(tapes) == len(committed) == 5
    assert {check["status"] for check in tapes.values()} == {"passed"}
    assert "reference/tapes/support_desk/support_desk.refund_damaged_item.reference" in tapes
    index = json.loads((out / "tapes" / "index.json").read_text(encoding="utf-8"))
    names = sorted(entry["name"] for entry in index["tapes"])
    assert names == sorted(path.name.rsplit("-", 1)[0] for path in committed)
    for entry in index["tapes"]:
        assert entry["interactions"] >= 2 and len(entry["sha256"]) == 64 and entry["recorded_at"]
