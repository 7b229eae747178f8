"""The tape stage's judgement before any container starts: unreadable, unanchored and stale tapes are refused.

The replay itself runs real containers: tests/integration/test_tapes_containers.py.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from windtunnel._drivers.manifest import load_manifest
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.containers import RuntimeImages, tape_name
from windtunnel._tapes.lifecycle import promote
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.policy import SCRIPTED_UPSTREAM
from windtunnel._tapes.stage import TapeReplay, replay_tape, tape_stem
from windtunnel._tapes.store import write_tape

REPO = Path(__file__).resolve().parents[2]
WHEN = datetime(2030, 3, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(str(REPO / "scenarios" / "support_desk"))


@pytest.fixture
def images() -> RuntimeImages:
    """Never asked for a runtime in these tests: each refusal happens before a container would start."""
    manifest = load_manifest(REPO / "runtimes" / "reference")
    return RuntimeImages(
        client=None, windtunnel_image="-", runtime_image="-", manifest=manifest, timeout_s=1.0, session=None
    )


def golden(directory: Path, **lineage: str) -> Path:
    builder = TapeBuilder("t", upstream=SCRIPTED_UPSTREAM, clock=lambda: WHEN)
    builder.add(
        "POST", "/v1/chat/completions", {"model": "m", "messages": []}, RecordedResponse(status=200, body={})
    )
    write_tape(builder.build(), directory / "t.jsonl")
    return promote(
        directory / "t.jsonl", directory / "golden", passed=True, clock=lambda: WHEN, lineage=lineage
    ).path


def replay(
    images: RuntimeImages, pack: Pack, path: Path, *, days: float, certification: bool = True
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


def test_an_unreadable_tape_fails_with_its_error(images: RuntimeImages, pack: Pack, tmp_path: Path) -> None:
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
    images: RuntimeImages, pack: Pack, tmp_path: Path
) -> None:
    result = replay(images, pack, golden(tmp_path, scenario="nope", verdict="passed"), days=1)
    assert result.result is None and result.gateway is None
    assert result.problems == ["the tape names scenario 'nope', which pack 'support_desk' does not have"]
    unnamed = replay(images, pack, golden(tmp_path / "b"), days=1)
    assert (
        "the tape records no verdict (lineage.verdict), so the replay cannot be compared" in unnamed.problems
    )
    assert any("names no scenario" in problem for problem in unnamed.problems)


def test_a_stale_tape_fails_certification_without_a_replay(
    images: RuntimeImages, pack: Pack, tmp_path: Path
) -> None:
    path = golden(
        tmp_path, runtime="reference", pack="support_desk", scenario="refund_damaged_item", verdict="passed"
    )
    result = replay(images, pack, path, days=31)
    assert result.result is None
    (problem,) = result.problems
    assert problem.startswith("TapeStale: tape ") and "31.0 days ago; the limit is 30 days" in problem
    detail = result.detail()
    assert "wt tapes record --runtime reference --pack support_desk --scenario refund_damaged_item" in detail
    assert "--scripted-upstream" in detail


def test_a_tape_recorded_through_another_runtime_is_a_problem(
    images: RuntimeImages, pack: Pack, tmp_path: Path
) -> None:
    path = golden(tmp_path, runtime="pydantic-ai", pack="support_desk", scenario="nope", verdict="passed")
    result = replay(images, pack, path, days=1)
    assert any("recorded through runtime 'pydantic-ai'" in problem for problem in result.problems)
