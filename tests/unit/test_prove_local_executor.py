"""The local executor plays a case's decisions on fresh in-process mocks and scores it with the real gates."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from windtunnel._packs.loader import load_pack
from windtunnel._prove.local_executor import LocalCaseRunner
from windtunnel._prove.seam import CaseOutcome
from windtunnel.api import Pack, ReferenceCase, ReferenceDecision, ReferenceToolCall, StateProbeAvailable

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prove_packs"


def test_golden_passes_and_the_control_fails_each_on_fresh_fixtures(tmp_path: Path) -> None:
    pack = load_pack(str(FIXTURES / "shop"))
    scenario = pack.scenario("charge_basket")
    run = LocalCaseRunner(out_dir=tmp_path)
    poison = run(pack, scenario, scenario.case("charge-tea-only"))
    golden = run(pack, scenario, scenario.case("charge-everything"))
    assert golden == CaseOutcome(gate_passed=True, summary="passed", effect=golden.effect)
    assert not poison.gate_passed and poison.error is None
    assert "/shop/charges/0/amount equals 37.5: does not hold, found 12.5" in poison.summary
    trace = json.loads(
        (tmp_path / "shop" / "charge_basket" / "golden-charge-everything.trace.json").read_text()
    )
    assert (
        len(trace["state"]["shop"]["charges"]) == 1
    )  # the poison's charge did not survive into the golden's run
    assert trace["reference_case"] == "charge-everything" and trace["runtime"] == "prove-local"


def test_the_effect_tells_runs_apart_by_what_they_did() -> None:
    pack = load_pack(str(FIXTURES / "shop"))
    blind = dataclasses.replace(pack, state_probe_factory=None)  # no world state: calls alone must tell
    scenario = blind.scenario("charge_basket")
    golden = scenario.case("charge-everything")
    wrong_lookup = ReferenceCase(
        name="wrong-lookup",
        kind="poison",
        decisions=(
            ReferenceDecision(tool_calls=(ReferenceToolCall("get_basket", {"basket_id": "K-999"}),)),
            *golden.decisions[1:],
        ),
    )
    run = LocalCaseRunner()
    assert run(blind, scenario, golden).effect == run(blind, scenario, golden).effect  # when is not what
    assert run(blind, scenario, wrong_lookup).effect != run(blind, scenario, golden).effect
    assert (
        run(blind, scenario, scenario.case("charge-tea-only")).effect != run(blind, scenario, golden).effect
    )


def test_an_invalid_run_is_reported_as_an_error_not_a_gate_result() -> None:
    pack = load_pack(str(FIXTURES / "shop"))
    scenario = dataclasses.replace(pack.scenario("charge_basket"), preconditions=[StateProbeAvailable()])
    bare = Pack(name="bare", scenarios=[scenario], mcp_servers=pack.mcp_servers)  # no state probe wired
    outcome = LocalCaseRunner()(bare, scenario, scenario.case("charge-everything"))
    assert not outcome.gate_passed
    assert outcome.error is not None and "no state probe was wired" in outcome.error
