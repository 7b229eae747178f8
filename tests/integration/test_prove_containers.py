"""`wt prove` through the reference runtime in containers, and proving inside certify's selftest stage.

Nothing is mocked: the reference runtime's container, the model gateway serving each case's decisions,
and the pack's MCP mocks all run for real. Every container carries this pytest session's label.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from windtunnel._bundle.models import CheckScope, Stage
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.publish import publish
from windtunnel._pipeline.stages import build_stage, selftest_stage

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "tests" / "fixtures" / "prove_packs" / "shop"


@pytest.fixture(scope="module")
def prove_env(
    docker_client: Any, base_image: str, run_label: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    runs = tmp_path_factory.mktemp("runs")
    return {
        **os.environ,
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": run_label,
        "WT_RUNS_DIR": str(runs),
        "WT_LOCK_DIR": str(runs / "locks"),
    }


def prove(env: dict[str, str], out: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "prove", "--format", "json", "--out", str(out), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, report, done.stderr


def test_the_bundled_packs_are_proved_through_the_reference_runtime_with_no_weak_gate(
    prove_env: dict[str, str], tmp_path: Path
) -> None:
    code, report, stderr = prove(prove_env, tmp_path / "bundled.json", "--runtime", "reference", "--mutate")
    assert code == 0, stderr[-3000:]
    assert report["runtime"] == "reference" and report["summary"] == {"proved": 5}
    for proof in report["proofs"]:
        assert {case["kind"] for case in proof["cases"]} == {"golden", "poison"}
        assert all(case["verdict"] == "pass" for case in proof["cases"]) and proof["leaks"] == []
    mutants = [m for s in report["mutation"]["scenarios"] for m in s["mutants"]]
    assert mutants and {m["verdict"] for m in mutants} <= {"killed", "equivalent"}
    traces = list(Path(report["traces"]).rglob("*.trace.json"))
    runtimes = {json.loads(path.read_text())["runtime"] for path in traces}
    assert runtimes == {"reference"} and len(traces) >= 12 + len(mutants)


def test_mutation_through_the_reference_runtime_reports_the_weak_gate(
    prove_env: dict[str, str], tmp_path: Path
) -> None:
    code, report, stderr = prove(
        prove_env,
        tmp_path / "weak.json",
        "--runtime",
        "reference",
        "--mutate",
        "--pack",
        str(SHOP),
        "--scenario",
        "weak_gate",
    )
    assert code == 1, stderr[-3000:]
    assert report["summary"] == {"proved": 1}
    (scenario,) = report["mutation"]["scenarios"]
    weak = {m["detail"] for m in scenario["mutants"] if m["verdict"] == "weak"}
    assert "charge argument amount: 37.5 -> 38.5 (+1)" in weak
    changed = next(
        m for m in scenario["mutants"] if m["detail"] == "charge argument amount: 37.5 -> 38.5 (+1)"
    )
    assert changed["decisions"][1]["tool_calls"][0]["arguments"]["amount"] == 38.5


LEAKY_PACK = '''"""A pack for the certify test: one clean scenario and one whose prompt gives the answer away."""

from windtunnel.api import Pack, mock_state_probe

from .tools import shop_server
from .shop_pack import scenario

PACK = Pack(
    name="leaky_shop",
    scenarios=[
        scenario("charge_basket", "Please charge basket K-100 for everything in it."),
        scenario("leak_number", "Please charge basket K-100; the total comes to 37.50 by my count."),
    ],
    mcp_servers={"shop": shop_server},
    state_probe_factory=mock_state_probe,
    rules={"whole-basket": "Charge the whole basket: the sum of its items' prices."},
    evaluator_files=["POLICY.md"],
)
'''


def leaky_pack(tmp_path: Path) -> Path:
    """The shop test pack's tools and scenario builder, with only a clean and a leaking scenario."""
    pack = tmp_path / "leaky_shop"
    pack.mkdir()
    for name in ("tools.py", "POLICY.md"):
        shutil.copy(SHOP / name, pack / name)
    shutil.copy(SHOP / "pack.py", pack / "shop_pack.py")
    (pack / "pack.py").write_text(LEAKY_PACK, encoding="utf-8")
    return pack


def test_a_leaking_scenario_makes_certify_harness_invalid_and_unsigned(
    docker_client: Any, base_image: str, run_label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_BASE_IMAGE", base_image)
    monkeypatch.setenv("WT_SESSION_LABEL", run_label)
    config = CertifyConfig(
        runtimes=(),
        pack_refs=(str(leaky_pack(tmp_path)),),
        root=REPO,
        out_dir=tmp_path / "bundle",
        suite_dir=REPO / "conformance",
    )
    plan = (Step(Stage.BUILD, build_stage), Step(Stage.SELFTEST, selftest_stage))
    outcome = execute(plan, config, DockerExecutor())
    published = publish(config, outcome)
    checks = {check.id: check for check in outcome.checks}
    leak = checks["harness/selftest/prove/leaky_shop/leak_number"]
    assert (leak.scope, leak.status) == (CheckScope.HARNESS, CheckStatus.FAILED)
    assert leak.detail.startswith("answer_leaked: prompt[0] gives the answer away")
    assert checks["harness/selftest/prove/leaky_shop/charge_basket"].status is CheckStatus.PASSED
    assert checks["reference/selftest/leaky_shop/leak_number/charge-everything"].status is CheckStatus.PASSED
    assert published.verdict.result is CertificationResult.HARNESS_INVALID and published.seal is None
    assert not (config.out_dir / "attestations").exists()
    proof = json.loads((config.out_dir / leak.evidence[0]).read_text())
    assert proof["code"] == "answer_leaked" and proof["defects"][0]["excerpt"] == "37.50"
