"""The reference control's cached selftest: its key moves with every input, only a passing control is kept,
a hit is recorded as cached, and --no-cache, a poison or a changed input runs the stage afresh."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from windtunnel._bundle.models import CheckRecord, CheckScope, Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selected
from windtunnel._pipeline import control_cache
from windtunnel._pipeline.config import REFERENCE, CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stages import selftest_stage

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "tests" / "fixtures" / "prove_packs" / "shop"
IMAGES = {"windtunnel": "sha256:" + "a" * 64, "runtime:reference": "sha256:" + "b" * 64}
RAN_AT = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def selected(pack_dir: Path) -> list[Selected]:
    pack = load_pack(str(pack_dir))
    return [Selected(pack, pack.scenario("charge_basket"))]


def key(pack_dir: Path = SHOP, **changes: object) -> str | None:
    inputs: dict[str, object] = {
        "images": IMAGES,
        "selected": selected(pack_dir),
        "suite_dir": REPO / "conformance",
        "requirement_set": "3",
        "tiers": (),
        "certification": True,
    }
    return control_cache.control_key(**{**inputs, **changes})  # type: ignore[arg-type]


def passed(name: str = "charge_basket", status: CheckStatus = CheckStatus.PASSED) -> CheckRecord:
    return CheckRecord(
        id=f"reference/selftest/shop/{name}/golden",
        runtime=REFERENCE,
        stage=Stage.SELFTEST,
        status=status,
        detail="pass: gate passed",
        evidence=["evidence/reference/selftest/x.json"],
    )


def test_the_key_is_stable_and_moves_with_every_input(tmp_path: Path) -> None:
    base = key()
    assert base is not None and base == key()
    changed_image = {**IMAGES, "windtunnel": "sha256:" + "c" * 64}
    others = [
        key(images=changed_image),
        key(requirement_set="2"),
        key(tiers=("smoke",)),
        key(certification=False),
        key(selected=[]),
    ]
    assert base not in others and len(set(others)) == len(others)
    copy = tmp_path / "shop"
    shutil.copytree(SHOP, copy)
    assert key(copy) == base  # the same files: the same key, wherever they are
    scenario_file = next(path for path in sorted(copy.rglob("*")) if path.is_file() and path.suffix != ".pyc")
    scenario_file.write_bytes(scenario_file.read_bytes() + b"\n")
    assert key(copy) != base


def test_no_image_digest_means_no_key() -> None:
    assert key(images={}) is None


def test_only_a_control_whose_scored_checks_all_passed_is_kept() -> None:
    assert control_cache.keepable([passed()])
    assert not control_cache.keepable([passed(), passed("b", CheckStatus.FAILED)])
    assert not control_cache.keepable([passed(status=CheckStatus.ERROR)])
    assert not control_cache.keepable([])


def test_a_stored_control_loads_back_and_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    control_cache.store(tmp_path, "k1", "certify-abc", RAN_AT, [passed()])
    loaded = control_cache.load(tmp_path, "k1")
    assert loaded is not None and loaded.records == (passed(),) and loaded.run_id == "certify-abc"
    assert control_cache.load(tmp_path, "k2") is None
    (tmp_path / "k1.json").write_text("{not json")
    assert control_cache.load(tmp_path, "k1") is None


def context(tmp_path: Path, *, name: str = REFERENCE, cache: Path | None) -> StageContext:
    config = CertifyConfig(
        runtimes=(),
        pack_refs=(str(SHOP),),
        root=REPO,
        out_dir=tmp_path / "bundle",
        suite_dir=REPO / "conformance",
        requirement_set="3",
        control_cache=cache,
    )
    # No runtime: played afresh, the stage can only say it has no reference-capable runtime.
    return StageContext(
        config=config,
        suite=Suite.load(config.suite_dir, "3"),
        selected=selected(SHOP),
        run=RuntimeRun(name=name, images=dict(IMAGES)),
        stage=Stage.SELFTEST,
        run_id="certify-now",
    )


def store_for(ctx: StageContext, cache: Path) -> str:
    stored = key()
    assert stored is not None
    harness = passed().model_copy(
        update={"id": "harness/selftest/prove/shop/charge_basket", "scope": CheckScope.HARNESS}
    )
    control_cache.store(cache, stored, "certify-before", RAN_AT, [passed(), harness])
    return stored


def test_a_hit_replays_the_records_marked_cached_with_key_and_date(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ctx = context(tmp_path, cache=cache)
    stored = store_for(ctx, cache)
    records = selftest_stage(ctx)
    assert [r.id for r in records] == [
        "reference/selftest/shop/charge_basket/golden",
        "harness/selftest/prove/shop/charge_basket",
    ]
    assert all(r.cached and r.cache_key == stored and r.cached_at == RAN_AT.isoformat() for r in records)
    assert all(r.detail.startswith("cached (run certify-before at 2026-12-03") for r in records)
    note = ctx.bundle / records[0].evidence[0]
    assert note.is_file() and stored in note.read_text()  # this run's note; nothing else in --out


def test_no_cache_a_changed_input_or_a_poison_runs_the_stage_afresh(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    stored = store_for(context(tmp_path, cache=cache), cache)
    fresh = [
        context(tmp_path / "no-cache", cache=None),
        context(tmp_path / "poison", name="reference-poison-keep_conversation_across_reset", cache=cache),
    ]
    changed = context(tmp_path / "changed", cache=cache)
    changed.run.images["windtunnel"] = "sha256:" + "d" * 64
    for ctx in [*fresh, changed]:
        (record,) = selftest_stage(ctx)
        assert (record.id.split("/")[-1], record.status, record.cached) == (
            "reference-cases",
            CheckStatus.NOT_MEASURED,
            False,
        )
    assert [p.name for p in cache.iterdir()] == [f"{stored}.json"]  # a not-passing control is never kept
