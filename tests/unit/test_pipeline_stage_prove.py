"""Proving in certify's selftest stage: proofs from the stage's own verdicts become harness checks.

The verdicts are real: each reference case of the shop test pack is played in-process (the local
proving executor's runtime, real gates, real mocks), as the selftest stage plays them in containers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from windtunnel._bundle.keys import KeyOrigin
from windtunnel._bundle.models import CheckRecord, CheckScope, ChecksFile, Stage, Verdict
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._core.vocabulary import Verdict as CaseOutcome
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selected
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stage_prove import CaseKey, prove_checks
from windtunnel._prove.local_executor import _ScriptedRuntime
from windtunnel._prove.models import ScenarioProof
from windtunnel._prove.proofs_file import read_proofs
from windtunnel._runner.batch import effective_config, make_probe
from windtunnel._runner.library import run_reference_case
from windtunnel._selftest.verdicts import CaseVerdict
from windtunnel._trace.models import ErrorKind
from windtunnel.spi.agent_runtime import AgentConfig

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "tests" / "fixtures" / "prove_packs" / "shop"


def context(tmp_path: Path, names: list[str], *, certification: bool = True) -> StageContext:
    pack = load_pack(str(SHOP))
    config = CertifyConfig(
        runtimes=(),
        pack_refs=(str(SHOP),),
        root=REPO,
        out_dir=tmp_path / "bundle",
        suite_dir=REPO / "conformance",
        certification=certification,
    )
    return StageContext(
        config=config,
        suite=Suite.load(config.suite_dir),
        selected=[Selected(pack, pack.scenario(name)) for name in names],
        run=RuntimeRun(name="reference"),
        stage=Stage.SELFTEST,
        run_id="certify-test",
    )


def played(ctx: StageContext) -> dict[CaseKey, CaseVerdict]:
    """Every selected reference case played for real, each on fresh in-process mocks."""
    verdicts = {}
    for item in ctx.selected:
        for case in item.scenario.reference_cases:
            mcps = [InProcessMCPHandle(plan) for plan in item.pack.plans()]
            result = run_reference_case(
                _ScriptedRuntime(item.scenario),
                item.scenario,
                case,
                effective_config(AgentConfig(), item.pack, item.scenario),
                mcps=mcps,
                state_probe=make_probe(item.pack, mcps),
                runtime_name="reference",
            )
            key = (item.pack.name, item.scenario.name, case.name)
            verdicts[key] = CaseVerdict.from_run(item.pack.name, case.kind, result, None)
    return verdicts


def by_id(records: list[CheckRecord]) -> dict[str, CheckRecord]:
    return {record.id: record for record in records}


def verdict_of(records: list[CheckRecord]) -> CertificationResult:
    runtime_check = CheckRecord(
        id="reference/selftest/x", runtime="reference", stage=Stage.SELFTEST, status=CheckStatus.PASSED
    )
    checks = ChecksFile(requirement_set="1", checks=[runtime_check, *records])
    return Verdict.from_checks(checks, signing_key=KeyOrigin.DEV).result


def test_a_clean_suite_gives_passing_harness_checks_and_writes_the_proofs(tmp_path: Path) -> None:
    ctx = context(tmp_path, ["charge_basket", "assumed"])
    records = by_id(prove_checks(ctx, played(ctx)))
    clean = records["harness/selftest/prove/shop/charge_basket"]
    assert (clean.scope, clean.stage, clean.status) == (
        CheckScope.HARNESS,
        Stage.SELFTEST,
        CheckStatus.PASSED,
    )
    assert clean.detail.startswith("proved: golden passes, every negative control fails, no leak")
    assumed = records["harness/selftest/prove/shop/assumed"]
    assert assumed.status is CheckStatus.PASSED and "assumed by the author" in assumed.detail
    evidence = ctx.bundle / clean.evidence[0]
    proof = ScenarioProof.model_validate(json.loads(evidence.read_text()))
    assert [(case.case, case.verdict) for case in proof.cases] == [
        ("charge-everything", "pass"),
        ("charge-tea-only", "pass"),
    ]
    proofs = read_proofs(ctx.bundle / clean.evidence[1])
    assert [p.scenario for p in proofs.proofs] == ["charge_basket", "assumed"]
    assert verdict_of(list(records.values())) is CertificationResult.PASSED


@pytest.mark.parametrize(
    ("scenario", "code"),
    [
        ("leak_number", "answer_leaked"),
        ("no_control", "no_negative_control"),
        ("source_unresolved", "source_unresolved"),
    ],
)
def test_a_broken_scenario_fails_its_harness_check_and_the_run_is_harness_invalid(
    tmp_path: Path, scenario: str, code: str
) -> None:
    ctx = context(tmp_path, ["charge_basket", scenario])
    records = prove_checks(ctx, played(ctx))
    check = by_id(records)[f"harness/selftest/prove/shop/{scenario}"]
    assert check.status is CheckStatus.FAILED and check.detail.startswith(f"{code}: ")
    assert verdict_of(records) is CertificationResult.HARNESS_INVALID


def test_development_mode_lets_a_scenario_without_control_pass_with_its_warning(tmp_path: Path) -> None:
    ctx = context(tmp_path, ["no_control"], certification=False)
    (check,) = prove_checks(ctx, played(ctx))
    assert check.status is CheckStatus.PASSED
    assert "warning: scenario 'no_control' has no negative control" in check.detail


def test_a_case_that_errored_or_was_not_played_is_broken_check_an_error(tmp_path: Path) -> None:
    ctx = context(tmp_path, ["charge_basket", "weak_gate"])
    verdicts = played(ctx)
    errored = CaseVerdict(
        pack="shop",
        scenario="charge_basket",
        case="charge-tea-only",
        kind="poison",
        verdict=CaseOutcome.ERROR,
        subkind=ErrorKind.SETUP,
        detail="no engine",
    )
    verdicts[("shop", "charge_basket", "charge-tea-only")] = errored
    del verdicts[("shop", "weak_gate", "say-nothing-useful")]
    records = by_id(prove_checks(ctx, verdicts))
    errored_check = records["harness/selftest/prove/shop/charge_basket"]
    assert errored_check.status is CheckStatus.ERROR and "no engine" in errored_check.detail
    missing = records["harness/selftest/prove/shop/weak_gate"]
    assert missing.status is CheckStatus.ERROR
    assert "no verdict for reference case 'say-nothing-useful'" in missing.detail
