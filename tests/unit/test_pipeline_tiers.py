"""Certify's selftest stage with run tiers: a quarantined case runs when asked, is recorded with its tier,
and never changes the verdict; the same failure in a gating tier does. Real stage, real packs on disk, the
in-process reference-capable double (tests/fixtures/plugins/reference_double.py) as the runtime."""

from __future__ import annotations

import sys
from pathlib import Path

from windtunnel._bundle.junit_map import junit_for
from windtunnel._bundle.keys import KeyOrigin
from windtunnel._bundle.models import CheckRecord, ChecksFile, Stage, Verdict
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._packs.loader import discover_packs
from windtunnel._packs.selection import Selection, select
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stages import selftest_stage
from windtunnel._runtimes.resolve import Found, RuntimeDescription

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))
from plugins.reference_double import PlayingRuntime  # type: ignore[import-not-found]  # noqa: E402

TIERS = str(FIXTURES / "packs" / "tiers")


class _Labelled:
    """A plugin that states its model; the stage takes the label from the run's description."""

    def __init__(self, label: str) -> None:
        self.label = label

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> PlayingRuntime:
        return PlayingRuntime()

    def model_label(self, runtime_name: str) -> str | None:
        return self.label


def _labelled(label: str) -> RuntimeDescription:
    return RuntimeDescription(
        name="reference", found=Found.ATTR, source="reference", origin="test", plugin=_Labelled(label)
    )


def _stage(tmp_path: Path, tiers: tuple[str, ...]) -> list[CheckRecord]:
    config = CertifyConfig(
        runtimes=(),
        pack_refs=(TIERS,),
        root=tmp_path,
        out_dir=tmp_path / "out",
        suite_dir=REPO / "conformance",
        tiers=tiers,
    )
    context = StageContext(
        config=config,
        suite=Suite.load(config.suite_dir),
        selected=select(discover_packs(config.pack_refs, base=REPO), Selection(tiers=config.tiers)),
        run=RuntimeRun(name="reference", description=_labelled("label-x"), runtime=PlayingRuntime()),
        stage=Stage.SELFTEST,
        run_id="certify-tiers",
    )
    return selftest_stage(context)


def _verdict(records: list[CheckRecord]) -> CertificationResult:
    return Verdict.from_checks(
        ChecksFile(requirement_set="3", checks=records), signing_key=KeyOrigin.DEV
    ).result


def test_quarantined_cases_run_only_when_asked_and_never_change_the_verdict(tmp_path: Path) -> None:
    gate = _stage(tmp_path / "gate", ())
    assert not any("quarantined_broken" in record.id for record in gate)
    assert {record.tier for record in gate} == {"smoke", "stable"}
    assert _verdict(gate) is CertificationResult.PASSED

    records = _stage(tmp_path / "asked", ("smoke", "stable", "quarantined"))
    quarantined = [record for record in records if "quarantined_broken" in record.id]
    golden = next(r for r in quarantined if r.id == "reference/selftest/tiers/quarantined_broken/answer")
    assert golden.status is CheckStatus.FAILED and golden.tier == "quarantined" and not golden.scored
    proof = next(r for r in quarantined if r.id.startswith("harness/selftest/prove/"))
    assert proof.status is not CheckStatus.PASSED and not proof.scored
    assert _verdict(records) is CertificationResult.PASSED  # recorded, failed, and not gating
    traces = list((tmp_path / "asked" / "out" / "traces").rglob("*.trace.json"))
    assert traces and all('"model_label": "label-x"' in path.read_text() for path in traces)


def test_the_same_failure_scored_would_fail_certification(tmp_path: Path) -> None:
    """The control: were the quarantined records gating, the verdict would not pass."""
    records = _stage(tmp_path, ("smoke", "stable", "quarantined"))
    scored = [record.model_copy(update={"scored": True}) for record in records]
    assert _verdict(scored) is not CertificationResult.PASSED


def test_the_bundle_junit_carries_each_selftest_checks_tier(tmp_path: Path) -> None:
    records = _stage(tmp_path, ("smoke", "stable", "quarantined"))
    xml = junit_for(ChecksFile(requirement_set="3", checks=records))
    assert '<property name="tier" value="quarantined" />' in xml
    assert '<property name="tier" value="smoke" />' in xml
