"""Tapes end to end through containers: every committed tape replays through the runtime that recorded it,
broken ones fail with their own error, `wt tapes record` records and promotes, and the certify pipeline's
tapes stage replays and indexes the committed tapes.

Nothing is mocked: real images, the gateway container in replay or record mode with the tape mounted, the
pack's MCP mock containers, the runtime's container. Every container carries this pytest session's label,
and the session fixture fails if any outlives it. Tests that are not about staleness judge a tape's age
with a clock pinned one day after its oldest interaction, so they never expire; the staleness tests inject
their own clocks.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._bundle.models import Stage
from windtunnel._config import load_settings
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.plan import PLAN, execute
from windtunnel._pipeline.publish import tape_index
from windtunnel._pipeline.stage_tapes import TapeReplay, replay_tape, tape_stem
from windtunnel._runtimes.abilities import FreshGatewayRuntime
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._tapes.lifecycle import find_tapes
from windtunnel._tapes.model import Tape
from windtunnel._tapes.store import load_tape

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
RERECORD = "wt tapes record --runtime reference --pack support_desk --scenario refund_damaged_item --scripted-upstream"
COMMITTED = sorted(REPO.glob("scenarios/*/tapes/*/*.jsonl"))
"""Every committed tape, in `<pack>/tapes/<runtime>/`: the runtime directory names the runtime to replay it through."""


def pinned(tape: Tape) -> Callable[[], datetime]:
    """A clock one day after the tape's oldest interaction: the tape is fresh by it, whatever today is."""
    return lambda: tape.oldest + timedelta(days=1)


@pytest.fixture(scope="module")
def env(docker_client: object, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@pytest.fixture(scope="module")
def sources_of(env: dict[str, str]) -> Iterator[Callable[[str], FreshGatewayRuntime]]:
    """A runtime by name, built by its driver's plugin (its images built or reused) once per module: the
    source of the fresh runtimes each replay runs through."""
    built: dict[str, FreshGatewayRuntime] = {}

    def of(runtime: str) -> FreshGatewayRuntime:
        if runtime not in built:
            manifest = resolve_runtime(runtime, load_settings(REPO)).manifest
            assert manifest is not None
            made = ContainerRuntimePlugin(manifest, env=env).build(runtime, "tapes-test", None)
            assert isinstance(made, FreshGatewayRuntime)
            built[runtime] = made
        return built[runtime]

    yield of
    for runtime in built.values():
        runtime.close()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def source(sources_of: Callable[[str], FreshGatewayRuntime]) -> FreshGatewayRuntime:
    return sources_of("reference")


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


def replay(
    source: FreshGatewayRuntime,
    pack: Pack,
    path: Path,
    tmp_path: Path,
    *,
    runtime: str = "reference",
    clock: Callable[[], datetime] | None = None,
    certification: bool = True,
) -> TapeReplay:
    return replay_tape(
        source,
        pack,
        path,
        runtime_name=runtime,
        clock=clock or pinned(load_tape(path)),
        certification=certification,
        out_dir=tmp_path / "traces",
    )


def test_every_committed_tape_is_where_the_tape_stage_and_verify_look() -> None:
    packs = [load_pack(str(path)) for path in sorted({tape.parents[2] for tape in COMMITTED})]
    assert COMMITTED, "no committed tapes: the replay test below would prove nothing"
    assert [file.path for file in find_tapes(packs)] == COMMITTED  # none outside tapes/<runtime>/


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: f"{path.parent.name}/{tape_stem(path)}")
def test_every_committed_tape_replays_through_the_runtime_that_recorded_it(
    sources_of: Callable[[str], FreshGatewayRuntime], path: Path, tmp_path: Path
) -> None:
    runtime, tape = path.parent.name, load_tape(path)
    result = replay(sources_of(runtime), load_pack(str(path.parents[2])), path, tmp_path, runtime=runtime)
    assert result.ok, result.detail()
    count = len(tape.interactions)
    assert result.fidelity is not None
    assert (result.fidelity.recorded, result.fidelity.requested, result.fidelity.matched) == (count,) * 3
    assert result.gateway is not None
    assert [request["seq"] for request in result.gateway["requests"]] == list(range(count))
    assert (result.gateway["consumed"], result.gateway["unused"], result.gateway["refusals"]) == (
        count,
        [],
        [],
    )
    assert result.replayed_verdict == tape.header.lineage.verdict == "passed"
    assert f"{count}/{count} interaction(s) replayed in order through {runtime}" in result.detail()


def test_a_committed_tape_replays_the_tool_calls_it_recorded(
    source: FreshGatewayRuntime, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    result = replay(source, pack, committed, tmp_path)
    assert result.ok, result.detail()
    assert result.result is not None
    assert [call["name"] for call in result.result.trace.mcp_calls or []] == ["lookup_order", "issue_refund"]
    assert list((tmp_path / "traces").rglob("*.trace.json"))


def test_a_poison_tape_fails_with_the_mismatch_diff_and_the_rerecord_command(
    source: FreshGatewayRuntime, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    raw = committed.read_bytes()
    position = raw.index(b"the mug in it was broken") + len("the m")  # one byte of the first request
    poison = tmp_path / "poison.jsonl"
    poison.write_bytes(raw[:position] + b"o" + raw[position + 1 :])
    result = replay(source, pack, poison, tmp_path)
    assert not result.ok
    text = result.detail()
    assert f"TapeMismatch: tape {poison}: no recorded request matches" in text
    assert '/body/messages/1/content: recorded …"42 arrived and the mog in it' in text
    assert 'requested …"42 arrived and the mug in it' in text
    assert f"re-record this tape: {RERECORD}" in text
    assert "the recorded request was changed after recording" in text  # the static check saw it too
    assert "verdict differs: recorded 'passed', replayed 'error'" in text
    assert result.gateway is not None and result.gateway["consumed"] == 0


def unscripted(path: Path, into: Path) -> Path:
    """A copy of a committed tape without the scripted mark: the age limit applies to it, as to a live one."""
    header, *rest = path.read_text().splitlines(keepends=True)
    data = json.loads(header)
    data["lineage"]["scripted"] = False
    copy = into / "live" / "support_desk.refund_damaged_item.reference.jsonl"
    copy.parent.mkdir()
    copy.write_text(json.dumps(data, separators=(",", ":")) + "\n" + "".join(rest))
    return copy


def test_an_exhausted_tape_fails_with_recorded_and_requested_counts(
    source: FreshGatewayRuntime, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    # Unscripted first: a scripted tape one answer short fails its claim before any replay (below).
    lines = unscripted(committed, tmp_path).read_text(encoding="utf-8").splitlines(keepends=True)
    short = tmp_path / "short.jsonl"
    short.write_text("".join(lines[:-1]), encoding="utf-8")
    result = replay(source, pack, short, tmp_path)
    assert not result.ok
    text = result.detail()
    assert "TapeExhausted: tape" in text
    assert "all 2 recorded interaction(s) were served" in text and "recorded 2, requested 3" in text
    assert RERECORD in text
    assert result.gateway is not None and result.gateway["consumed"] == 2
    scripted_short = tmp_path / "scripted-short.jsonl"
    scripted_short.write_text("".join(committed.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]))
    claimed = replay(source, pack, scripted_short, tmp_path)
    assert claimed.result is None and "is marked scripted" in claimed.problems[0]


def test_a_stale_tape_fails_certification_and_only_warns_in_development(
    source: FreshGatewayRuntime, pack: Pack, committed: Path, tmp_path: Path
) -> None:
    live = unscripted(committed, tmp_path)
    later = load_tape(live).oldest + timedelta(days=31)
    assert not replay(source, pack, committed, tmp_path, clock=lambda: later).problems  # scripted: no limit
    certified = replay(source, pack, live, tmp_path, clock=lambda: later)
    assert not certified.ok
    assert certified.problems[0].startswith("TapeStale: tape ")
    assert "31.0 days ago; the limit is 30 days" in certified.problems[0]
    assert certified.result is None  # a stale tape certifies nothing, so it is not replayed
    assert RERECORD in certified.detail()
    developing = replay(source, pack, live, tmp_path, clock=lambda: later, certification=False)
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
    env: dict[str, str], source: FreshGatewayRuntime, tmp_path: Path
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
    recorded = load_tape(
        run_tape
    ).header.lineage  # the run tape names its run, so promotion can tie the score
    assert (recorded.runtime, recorded.pack, recorded.scenario, recorded.source_run) == (
        "reference",
        "support_desk",
        "refuse_outside_window",
        None,
    )
    assert wt(env, "tapes", "verify", str(golden)).returncode == 0
    result = replay(source, load_pack(str(copy)), golden, tmp_path)
    assert result.ok, result.detail()


def test_the_certify_pipeline_replays_the_committed_tapes_and_indexes_them(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In process, with the pipeline's injectable clock set to 2027-02-01, over a month after the committed
    # tapes were recorded: they are scripted, so they do not go stale (docs/tapes.md), and CI does not turn
    # red on a date. Build, then the tapes stage.
    for name in ("WT_BASE_IMAGE", "WT_SESSION_LABEL"):
        monkeypatch.setenv(name, env[name])
    committed = sorted(REPO.glob("scenarios/*/tapes/reference/*.jsonl"))
    later = datetime(2027, 2, 1, tzinfo=UTC)
    assert all(later - load_tape(path).oldest > timedelta(days=30) for path in committed)
    settings = load_settings(cwd=REPO)
    config = CertifyConfig.from_settings(settings, runtimes=("reference",), out_dir=tmp_path / "bundle")
    config = dataclasses.replace(config, clock=lambda: later)
    plan = tuple(step for step in PLAN if step.stage in (Stage.BUILD, Stage.TAPES))
    outcome = execute(plan, config, DockerExecutor())
    tapes = {check.id: check for check in outcome.checks if check.stage is Stage.TAPES}
    assert len(tapes) == len(committed) == 5
    assert {check.status for check in tapes.values()} == {CheckStatus.PASSED}, [
        c.detail for c in tapes.values()
    ]
    assert "reference/tapes/support_desk/support_desk.refund_damaged_item.reference" in tapes
    index = json.loads(tape_index(config).model_dump_json())
    names = sorted(entry["name"] for entry in index["tapes"])
    assert names == sorted(tape_stem(path) for path in committed)
    for entry in index["tapes"]:
        assert entry["interactions"] >= 2 and len(entry["sha256"]) == 64 and entry["recorded_at"]
        assert entry["scripted"] is True and not entry["path"].startswith("/")
