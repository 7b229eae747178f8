"""The tape stage's judgement before any container starts: which tapes it replays (the replay profile, the
tapes/<runtime>/ layout), and unreadable, unanchored and stale tapes are refused.

The replay itself runs real containers: tests/integration/test_tapes_containers.py.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._bundle.models import Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stage_tapes import TapeReplay, replay_tape, tape_stem, tapes_stage
from windtunnel._score.models import Score, ScoreStatus
from windtunnel._tape_runs.containers import tape_name
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM
from windtunnel._tapes.promotion import promote
from windtunnel._tapes.store import write_tape

REPO = Path(__file__).resolve().parents[2]
WHEN = datetime(2030, 3, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(str(REPO / "scenarios" / "support_desk"))


class NeverFresh:
    """A FreshGatewayRuntime never asked for a fresh runtime in these tests: each refusal happens before a
    container would start."""

    def with_gateway(self, gateway: object) -> object:
        raise AssertionError(f"a fresh runtime was asked for ({gateway})")


@pytest.fixture
def images() -> NeverFresh:
    return NeverFresh()


LIVE = "https://api.example.test/v1"


def run_tape(directory: Path, upstream: str = SCRIPTED_UPSTREAM, **lineage: str) -> Path:
    """A run tape naming `lineage` (runtime, pack, scenario), and no verdict: it was never promoted."""
    builder = TapeBuilder("t", upstream=upstream, clock=lambda: WHEN, lineage=lineage)
    builder.add(
        "POST", "/v1/chat/completions", {"model": "m", "messages": []}, RecordedResponse(status=200, body={})
    )
    write_tape(builder.build(), directory / "t.jsonl")
    return directory / "t.jsonl"


def golden(
    directory: Path,
    *,
    runtime: str = "reference",
    pack: str = "support_desk",
    scenario: str,
    upstream: str = SCRIPTED_UPSTREAM,
) -> Path:
    """A golden tape promoted from a passing run of `scenario` (its lineage names that run and its verdict)."""
    named = {"runtime": runtime, "pack": pack, "scenario": scenario}
    score = Score(run_id="run-1", status=ScoreStatus.PASSED, runtime=runtime, pack=pack, scenario=scenario)
    return promote(
        run_tape(directory, upstream, **named), directory / "golden", scores=[score], clock=lambda: WHEN
    ).path


def replay(
    images: NeverFresh, pack: Pack, path: Path, *, days: float, certification: bool = True
) -> TapeReplay:
    return replay_tape(
        images,
        pack,
        path,
        runtime_name="reference",
        clock=lambda: WHEN + timedelta(days=days),
        certification=certification,
        out_dir=path.parent / "out",
    )


def test_the_check_is_named_after_the_tape_without_its_digest() -> None:
    assert (
        tape_stem(Path(f"tapes/reference/{tape_name('p', 's', 'reference')}-{'a' * 64}.jsonl"))
        == "p.s.reference"
    )
    assert tape_stem(Path("poison.jsonl")) == "poison"


def test_an_unreadable_tape_fails_with_its_error(images: NeverFresh, pack: Pack, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    result = replay(images, pack, path, days=1)
    assert not result.ok
    assert result.problems[0].startswith("TapeCorrupt: tape ")
    assert result.evidence(pack)["tape"] == {
        "name": "t",
        "path": str(path.resolve()),
        "sha256": hashlib.sha256(b"not json\n").hexdigest(),
    }
    assert "recorded_at" not in result.evidence(pack)["tape"]  # so the bundle's tape index leaves it out


def test_a_tape_that_names_no_scenario_of_the_pack_is_not_replayed(
    images: NeverFresh, pack: Pack, tmp_path: Path
) -> None:
    result = replay(images, pack, golden(tmp_path, scenario="nope"), days=1)
    assert result.result is None and result.gateway is None
    assert result.problems == ["the tape names scenario 'nope', which pack 'support_desk' does not have"]
    unnamed = replay(images, pack, run_tape(tmp_path / "b"), days=1)
    assert (
        "the tape records no verdict (lineage.verdict), so the replay cannot be compared" in unnamed.problems
    )
    assert any("names no scenario" in problem for problem in unnamed.problems)


def test_a_stale_tape_fails_certification_without_a_replay(
    images: NeverFresh, pack: Pack, tmp_path: Path
) -> None:
    path = golden(tmp_path, scenario="refund_damaged_item", upstream=LIVE)
    result = replay(images, pack, path, days=31)
    assert result.result is None
    (problem,) = result.problems
    assert problem.startswith("TapeStale: tape ") and "31.0 days ago; the limit is 30 days" in problem
    detail = result.detail()
    assert "wt tapes record --runtime reference --pack support_desk --scenario refund_damaged_item" in detail
    assert f"--upstream {LIVE}" in detail


def test_a_tape_falsely_marked_scripted_is_refused_not_exempted(
    images: NeverFresh, pack: Pack, tmp_path: Path
) -> None:
    """Marked scripted by its recorder, but its one answer is no decision of the scenario's golden case."""
    path = golden(tmp_path, scenario="refund_damaged_item")
    result = replay(images, pack, path, days=400)
    assert result.result is None and not any("TapeStale" in problem for problem in result.problems)
    (problem,) = result.problems
    assert problem.startswith(f"TapeCorrupt: tape {path} is marked scripted (exempt from the age limit), but")
    assert "scenario 'refund_damaged_item' scripts" in problem


def test_a_tape_dated_in_the_future_is_refused_as_suspect(
    images: NeverFresh, pack: Pack, tmp_path: Path
) -> None:
    path = golden(tmp_path, scenario="refund_damaged_item", upstream=LIVE)
    result = replay(images, pack, path, days=-2)  # the clock says two days before the tape was recorded
    assert result.result is None
    (problem,) = result.problems
    assert problem.startswith(f"TapeCorrupt: tape {path} is dated in the future")
    assert "never goes stale" in problem


def test_a_tape_recorded_through_another_runtime_is_a_problem(
    images: NeverFresh, pack: Pack, tmp_path: Path
) -> None:
    path = golden(tmp_path, runtime="pydantic-ai", scenario="nope")
    result = replay(images, pack, path, days=1)
    assert any("recorded through runtime 'pydantic-ai'" in problem for problem in result.problems)


def write_pack(root: Path, name: str, profiles: tuple[str, ...]) -> Pack:
    """A pack declaring `profiles`, with a golden tape in tapes/reference/ and a loose one in tapes/."""
    directory = root / name
    directory.mkdir()
    (directory / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        f"PACK = Pack(name={name!r}, scenarios=[Scenario(name='s', prompt='hi', target_facts=[['x']])], "
        f"profiles={list(profiles)!r})\n",
        encoding="utf-8",
    )
    made = golden(root / f"{name}-run", pack=name, scenario="s")
    (directory / "tapes" / "reference").mkdir(parents=True)
    (directory / "tapes" / "reference" / made.name).write_bytes(made.read_bytes())
    (directory / "tapes" / "loose.jsonl").write_bytes(made.read_bytes())
    return load_pack(str(directory))


def stage_context(tmp_path: Path, packs: list[Pack]) -> StageContext:
    config = CertifyConfig(
        runtimes=(),
        pack_refs=tuple(str(pack.root) for pack in packs),
        root=REPO,
        out_dir=tmp_path / "bundle",
        suite_dir=REPO / "conformance",
    )
    return StageContext(
        config=config,
        suite=Suite.load(config.suite_dir),
        selected=[Selected(pack, scenario) for pack in packs for scenario in pack.scenarios],
        run=RuntimeRun(name="reference"),
        stage=Stage.TAPES,
        run_id="certify-test",
    )


def test_the_stage_replays_tapes_in_tapes_runtime_of_packs_declaring_replay_only(tmp_path: Path) -> None:
    replayed = write_pack(tmp_path, "replayed", ("live", "record", "replay"))
    recorded = write_pack(tmp_path, "recorded", ("live", "record"))
    checks = tapes_stage(stage_context(tmp_path, [replayed, recorded]))
    by_id = {check.id: check for check in checks}
    assert sorted(by_id) == [
        "reference/tapes/recorded/profile",
        "reference/tapes/replayed/t",
    ]
    undeclared = by_id["reference/tapes/recorded/profile"]
    assert undeclared.status is CheckStatus.NOT_MEASURED and not undeclared.scored
    assert undeclared.detail.startswith(
        "pack recorded does not declare the replay profile (Pack.profiles: live, record), so its tapes are "
        "not replayed for reference"
    )
    # Not a container runtime here, so the tape itself is NOT_MEASURED too; the loose tape is never picked.
    assert by_id["reference/tapes/replayed/t"].status is CheckStatus.NOT_MEASURED


def test_a_runtime_without_committed_tapes_gets_one_unscored_observation(tmp_path: Path) -> None:
    recorded = write_pack(tmp_path, "recorded", ("record",))
    ctx = stage_context(tmp_path, [recorded])
    ctx.run = RuntimeRun(name="pydantic-ai")
    checks = tapes_stage(ctx)
    assert [(c.id, c.status, c.scored) for c in checks] == [
        ("pydantic-ai/tapes/recorded/profile", CheckStatus.NOT_MEASURED, False),
        ("pydantic-ai/tapes/committed", CheckStatus.NOT_MEASURED, False),
    ]
