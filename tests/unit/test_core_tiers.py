"""Run tiers: on scenarios and packs, in every verb's selection, in traces, scores, JUnit and the ledger.

The runs are real: `wt run` in a subprocess over a fixture pack on disk with the in_memory runtime, and
`wt selftest` with the in-process reference-capable double; nothing is stubbed but the model.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.unit.test_cli_run import wt
from windtunnel._core.tiers import certify_tiers, default_tiers, gating, live_upstream, tier_of
from windtunnel._packs.selection import Selection, select
from windtunnel.api import Pack, Scenario
from windtunnel.errors import PackError, ScenarioError, SelectionError

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TIERS = str(FIXTURES / "packs" / "tiers")


def _pack() -> Pack:
    return Pack(
        name="p",
        tier="smoke",
        scenarios=[
            Scenario(name="own", prompt="x", tier="quarantined"),
            Scenario(name="inherits", prompt="x"),
            Scenario(name="flaky", prompt="x", tier="live-flaky"),
            Scenario(name="stable", prompt="x", tier="stable"),
        ],
    )


def _names(selection: Selection) -> list[str]:
    return [item.scenario.name for item in select([_pack()], selection)]


def test_a_scenario_without_a_tier_takes_its_packs_and_outside_a_pack_is_stable() -> None:
    pack = _pack()
    assert [tier_of(s) for s in pack.scenarios] == ["quarantined", "smoke", "live-flaky", "stable"]
    assert tier_of(Scenario(name="alone", prompt="x")) == "stable"


def test_tier_values_are_checked_where_they_are_written() -> None:
    with pytest.raises(ScenarioError, match=r"tier is 'nightly'; expected one of smoke, stable") as caught:
        Scenario(name="s", prompt="x", tier="nightly")  # type: ignore[arg-type]
    assert caught.value.context["field"] == "tier"
    with pytest.raises(PackError, match="tier is 'weekly'"):
        Pack(name="p", scenarios=[], tier="weekly")  # type: ignore[arg-type]


def test_default_selection_runs_the_gate_tiers_and_live_flaky_only_with_a_live_upstream() -> None:
    assert _names(Selection()) == ["inherits", "stable"]
    assert _names(Selection(live_upstream=True)) == ["inherits", "flaky", "stable"]
    assert default_tiers(live_upstream=False) == ("smoke", "stable")


def test_tier_flag_selects_exactly_the_named_tiers() -> None:
    assert _names(Selection(tiers=["smoke"])) == ["inherits"]
    assert _names(Selection(tiers=["quarantined"])) == ["own"]
    assert _names(Selection(tiers=["quarantined", "stable"])) == ["own", "stable"]


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (Selection(tiers=["nightly"]), "--tier 'nightly' is not a run tier"),
        (Selection(tiers=["live-flaky"]), "live-flaky cases run only against a live model upstream"),
        (Selection(tiers=["smoke"], scenarios=["own"]), "matches no scenario"),
    ],
)
def test_bad_tier_selections_are_one_clear_error(selection: Selection, message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        select([_pack()], selection)


def test_a_selection_of_only_skipped_tiers_names_them() -> None:
    with pytest.raises(SelectionError, match=r"only scenarios of tiers that do not run here \(quarantined\)"):
        select([_pack()], Selection(scenarios=["own"]))


def test_certify_gates_on_smoke_and_stable_and_may_add_quarantined() -> None:
    assert certify_tiers([]) == ()
    assert certify_tiers(["smoke", "stable", "quarantined"]) == ("smoke", "stable", "quarantined")
    with pytest.raises(SelectionError, match="leaves out stable"):
        certify_tiers(["smoke"])


def test_gating_and_live_upstream() -> None:
    assert gating("smoke") and gating("live-flaky") and not gating("quarantined")
    assert live_upstream({"WT_GATEWAY_MODE": "record"}) and not live_upstream({})


def _json_run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    done = wt(
        "run", "--runtime", "in_memory", "--pack", TIERS, "--format", "json", *args, tmp=tmp_path, env=env
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}


def test_wt_run_default_runs_no_quarantined_or_live_flaky_case(tmp_path: Path) -> None:
    code, report = _json_run(tmp_path)
    assert code == 0
    assert [(r["scenario"], r["tier"]) for r in report["runs"]] == [
        ("smoke_hello", "smoke"),
        ("stable_hello", "stable"),
    ]


def test_wt_run_tier_smoke_runs_only_smoke_cases(tmp_path: Path) -> None:
    code, report = _json_run(tmp_path, "--tier", "smoke")
    assert code == 0
    assert [r["scenario"] for r in report["runs"]] == ["smoke_hello"]
    trace = next((tmp_path / "runs").rglob("*.trace.json"))
    assert json.loads(trace.read_text())["tier"] == "smoke"


def test_a_failing_quarantined_case_runs_when_asked_and_never_changes_the_verdict(tmp_path: Path) -> None:
    code, report = _json_run(tmp_path, "--tier", "stable", "--tier", "quarantined")
    assert code == 0  # the quarantined case failed, and the exit code is the stable case's
    runs = {r["scenario"]: r for r in report["runs"]}
    assert runs["quarantined_broken"]["status"] == "failed"
    assert runs["quarantined_broken"]["gating"] is False
    assert runs["stable_hello"]["status"] == "passed"
    sidecar = next((tmp_path / "runs").rglob("quarantined_broken/*.score.json"))
    assert json.loads(sidecar.read_text())["tier"] == "quarantined"
    ledger = json.loads((tmp_path / "runs" / "ledger.jsonl").read_text().splitlines()[-1])
    assert (
        ledger["not_gating"] == 1
        and ledger["failed"] == 1
        and ledger["selection"]["tier"]
        == [
            "stable",
            "quarantined",
        ]
    )


def test_the_same_failure_in_a_gating_tier_fails_the_run(tmp_path: Path) -> None:
    """The control for the test above: the check that quarantine never gates can fail."""
    done = wt(
        "run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "failing_gate"), tmp=tmp_path
    )
    assert done.returncode == 1


def test_junit_marks_a_quarantined_failure_skipped_with_its_tier(tmp_path: Path) -> None:
    out = tmp_path / "r.xml"
    done = wt(
        "run", "--runtime", "in_memory", "--pack", TIERS, "--tier", "quarantined", "--tier", "smoke",
        "--format", "junit", "--out", str(out), tmp=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cases = {case.get("name"): case for case in ET.parse(out).getroot().iter("testcase")}
    broken = cases["quarantined_broken[0]"]
    props = {p.get("name"): p.get("value") for p in broken.iter("property")}
    assert props["tier"] == "quarantined" and props["gating"] == "false" and props["status"] == "failed"
    assert broken.find("skipped") is not None and broken.find("failure") is None
    smoke = {p.get("name"): p.get("value") for p in cases["smoke_hello[0]"].iter("property")}
    assert smoke["tier"] == "smoke" and smoke["gating"] == "true"


def test_live_flaky_is_refused_without_a_live_upstream(tmp_path: Path) -> None:
    done = wt("run", "--runtime", "in_memory", "--pack", TIERS, "--tier", "live-flaky", tmp=tmp_path)
    assert done.returncode == 2
    assert "live-flaky cases run only against a live model upstream" in done.stderr
    assert "WT_GATEWAY_MODE=live" in done.stderr


def test_live_flaky_runs_with_a_live_upstream_and_retries_are_recorded_as_such(tmp_path: Path) -> None:
    live = {"WT_GATEWAY_MODE": "live"}
    code, report = _json_run(tmp_path, "--tier", "live-flaky", env=live)
    assert code == 0 and [r["scenario"] for r in report["runs"]] == ["flaky_hello"]
    assert report["retried"] == []  # it passed at once: no retry
    done = wt(
        "run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "tiers_flaky_miss"),
        "--format", "json", "--flaky-retries", "2", tmp=tmp_path / "miss", env=live,
    )  # fmt: skip
    assert done.returncode == 1  # live-flaky gates once its retries are spent
    report = json.loads(done.stdout)
    assert [r["attempt"] for r in report["retried"]] == [0, 1]
    assert [r["attempt"] for r in report["runs"]] == [2]
    traces = sorted(p.name for p in (tmp_path / "miss" / "runs").rglob("*.trace.json"))
    assert traces == ["run-0.retry-1.trace.json", "run-0.retry-2.trace.json", "run-0.trace.json"]
    sessions = {
        json.loads(p.read_text())["session_id"] for p in (tmp_path / "miss" / "runs").rglob("*.trace.json")
    }
    assert len(sessions) == 3  # every attempt on a session of its own


def test_other_tiers_are_never_retried(tmp_path: Path) -> None:
    done = wt(
        "run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "failing_gate"),
        "--format", "json", tmp=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1 and json.loads(done.stdout)["retried"] == []


def test_selftest_runs_quarantined_cases_only_when_asked_and_they_never_gate(tmp_path: Path) -> None:
    plugin = "plugins.reference_double:honest"
    base = ("selftest", "--runtime", plugin, "--pack", TIERS, "--format", "json")
    done = wt(*base, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {c["scenario"] for c in json.loads(done.stdout)["cases"]} == {"smoke_hello", "stable_hello"}
    done = wt(*base, "--tier", "smoke", "--tier", "stable", "--tier", "quarantined", tmp=tmp_path)
    assert done.returncode == 0, done.stderr  # its golden failed, and that never changes the exit code
    cases = {(c["scenario"], c["case"]): c for c in json.loads(done.stdout)["cases"]}
    assert cases[("quarantined_broken", "answer")]["verdict"] == "GOLDEN_FAILED"
    assert cases[("quarantined_broken", "answer")]["tier"] == "quarantined"


def test_certify_refuses_a_tier_selection_without_its_gate(tmp_path: Path) -> None:
    done = wt("certify", "--tier", "smoke", "--out", str(tmp_path / "out"), tmp=tmp_path)
    assert done.returncode == 2
    assert "wt certify gates on smoke and stable cases; --tier leaves out stable" in done.stderr


def test_prove_writes_a_quarantined_scenarios_proof_and_it_never_gates(tmp_path: Path) -> None:
    base = ("prove", "--local", "--pack", TIERS, "--format", "json")
    done = wt(*base, "--tier", "smoke", "--tier", "quarantined", tmp=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    proofs = {p["scenario"]: p for p in json.loads(done.stdout)["proofs"]}
    assert proofs["quarantined_broken"]["tier"] == "quarantined"
    assert proofs["quarantined_broken"]["code"] != "proved" and proofs["smoke_hello"]["code"] == "proved"
