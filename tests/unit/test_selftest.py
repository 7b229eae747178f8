"""wt selftest's order, verdicts and exit codes (docs/selftests.md), with an in-process reference-capable double."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from windtunnel._config import load_settings
from windtunnel._core.vocabulary import Verdict, selftest_exit
from windtunnel._packs.loader import discover_packs, load_pack
from windtunnel._packs.selection import Selected, Selection, select
from windtunnel._runtimes.resolve import Found, RuntimeDescription, resolve_runtime
from windtunnel._selftest.engine import SelftestOptions, run_selftest
from windtunnel._trace.models import ErrorKind
from windtunnel.errors import RuntimeFault, RuntimeUnavailableError, SelectionError
from windtunnel.spi import AgentConfig, ReferenceCase

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))

from plugins import reference_double  # type: ignore[import-not-found]  # noqa: E402


def load_runtime_plugin(ref: str) -> RuntimeDescription:
    return resolve_runtime(ref, load_settings(REPO))


@pytest.fixture(autouse=True)
def clean_log() -> None:
    reference_double.LOG.clear()


def selftest(plugin: str, packs: list[str] | None, tmp_path: Path) -> list:  # type: ignore[type-arg]
    loaded = load_runtime_plugin(plugin)
    loaded_packs = [load_pack(p) for p in packs] if packs else discover_packs((), base=REPO)
    report = run_selftest(
        loaded,
        select(loaded_packs, Selection()),
        SelftestOptions(out_root=tmp_path / "selftest", lock_dir=tmp_path / "locks"),
    )
    return report.cases


def test_bundled_packs_all_pass_in_seed_order(tmp_path: Path) -> None:
    cases = selftest("plugins.reference_double:honest", None, tmp_path)
    assert len(cases) == 12 and {c.verdict for c in cases} == {Verdict.PASS}, [c.detail for c in cases]
    assert selftest_exit([case.verdict for case in cases]) == 0
    log = reference_double.LOG
    assert log[:2] == ["build", "pre_run"] and log[-1] == "post_run" and log.count("pre_run") == 1
    per_case = log[2:-1]
    assert per_case.count("start_mcps") == per_case.count("stop_mcps") == 12
    # each case: fresh mocks, provision_reference once, reset, sends, teardown before the next case starts
    first = per_case[: per_case.index("stop_mcps") + 1]
    assert first[0] == "start_mcps" and first[1].startswith("provision_reference") and first[2] == "reset"
    assert first[-2:] == ["teardown", "stop_mcps"]
    poisons = [c for c in cases if c.kind == "poison"]
    assert all(c.score is not None and not c.score.passed for c in poisons)  # failed score, PASS verdict
    assert all(Path(c.trace).is_file() for c in cases if c.trace)
    assert not (tmp_path / "selftest" / "ledger.jsonl").exists()


def test_weak_gate_and_unreachable_golden(tmp_path: Path) -> None:
    cases = selftest("plugins.reference_double:honest", [str(FIXTURES / "packs" / "weak_gate")], tmp_path)
    verdicts = {(c.scenario, c.case): c.verdict for c in cases}
    assert verdicts[("says_refunded_only", "wrong-amount")] is Verdict.POISON_PASSED
    assert verdicts[("unreachable_golden", "says-something-else")] is Verdict.GOLDEN_FAILED
    assert selftest_exit([case.verdict for case in cases]) == 1


def test_hidden_tool_call_is_error_integrity(tmp_path: Path) -> None:
    cases = selftest("plugins.reference_double:hiding", [str(REPO / "scenarios" / "artifacts")], tmp_path)
    assert {c.verdict for c in cases} == {Verdict.ERROR}
    assert all(c.subkind is not None and c.subkind.value == "integrity" for c in cases)
    assert selftest_exit([case.verdict for case in cases]) == 1


def test_unsupported_runtime_prepares_nothing(tmp_path: Path) -> None:
    calls: list[str] = []
    pack = load_pack(str(REPO / "scenarios" / "artifacts"))

    def counting_factory():  # type: ignore[no-untyped-def]
        calls.append("factory")
        return pack.mcp_servers["workspace"]()

    counted = dataclasses.replace(pack, mcp_servers={"workspace": counting_factory})
    report = run_selftest(
        load_runtime_plugin("in_memory"),
        select([counted], Selection()),
        SelftestOptions(out_root=tmp_path, lock_dir=tmp_path),
    )
    assert {c.verdict for c in report.cases} == {Verdict.UNSUPPORTED}
    assert calls == [] and selftest_exit([case.verdict for case in report.cases]) == 2


def test_an_unsupported_case_keeps_its_scenarios_tier(tmp_path: Path) -> None:
    pack = load_pack(str(FIXTURES / "packs" / "tiers"))
    report = run_selftest(
        load_runtime_plugin("in_memory"),
        select([pack], Selection(tiers=("smoke", "stable", "quarantined"))),
        SelftestOptions(out_root=tmp_path, lock_dir=tmp_path),
    )
    tiers = {(case.scenario, case.case, case.kind): case.tier for case in report.cases}
    assert tiers == {
        (scenario, case, kind): tier
        for scenario, tier in (
            ("smoke_hello", "smoke"),
            ("stable_hello", "stable"),
            ("quarantined_broken", "quarantined"),
        )
        for case, kind in (("answer", "golden"), ("silent", "poison"))
    }
    assert {case.verdict for case in report.cases} == {Verdict.UNSUPPORTED}
    assert [case.gating for case in report.cases].count(False) == 2  # the quarantined scenario's two cases


def test_cli_formats_and_exit_codes(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(FIXTURES),
        "WT_RUNS_DIR": str(tmp_path / "runs"),
        "WT_LOCK_DIR": str(tmp_path / "locks"),
    }

    def wt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "windtunnel._cli.main", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    out = tmp_path / "s.json"
    done = wt(
        "selftest", "--runtime", "plugins.reference_double:honest", "--format", "json", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["exit_code"] == 0 and data["summary"] == {"PASS": 12}
    assert all("verdict" in c and "score" in c for c in data["cases"])
    weak = wt(
        "selftest",
        "--runtime",
        "plugins.reference_double:honest",
        "--pack",
        str(FIXTURES / "packs" / "weak_gate"),
        "--format",
        "junit",
        "--out",
        str(tmp_path / "s.xml"),
    )
    assert weak.returncode == 1 and "POISON_PASSED" in (tmp_path / "s.xml").read_text()
    unsupported = wt("selftest", "--runtime", "in_memory")
    assert unsupported.returncode == 2 and "UNSUPPORTED" in unsupported.stdout
    assert (tmp_path / "runs" / "selftest").is_dir() and not (tmp_path / "runs" / "ledger.jsonl").exists()


def _report(plugin: Any, packs: list[str], tmp_path: Path) -> Any:
    loaded = RuntimeDescription(name="double", found=Found.ATTR, source="test", origin="test", plugin=plugin)
    return run_selftest(
        loaded,
        select([load_pack(p) for p in packs], Selection()),
        SelftestOptions(out_root=tmp_path / "selftest", lock_dir=tmp_path / "locks"),
    )


def test_the_runtime_is_built_before_the_packs_are_selected(tmp_path: Path) -> None:
    def selection() -> list[Selected]:
        reference_double.LOG.append("select")
        return select([load_pack(str(REPO / "scenarios" / "artifacts"))], Selection())

    loaded = load_runtime_plugin("plugins.reference_double:honest")
    run_selftest(loaded, selection, SelftestOptions(out_root=tmp_path, lock_dir=tmp_path / "locks"))
    assert reference_double.LOG[:3] == ["build", "select", "pre_run"]


def test_a_selection_without_reference_cases_is_refused_after_the_build_and_post_run_runs(
    tmp_path: Path,
) -> None:
    loaded = load_runtime_plugin("plugins.reference_double:honest")
    with pytest.raises(SelectionError, match="no reference cases"):
        run_selftest(loaded, list, SelftestOptions(out_root=tmp_path, lock_dir=tmp_path / "locks"))
    assert reference_double.LOG == ["build", "post_run"]


class _PreRunRaises(reference_double.Plugin):  # type: ignore[misc]
    def pre_run(self, runtime: Any, scenarios: Any, runtime_name: str) -> None:
        reference_double.LOG.append("pre_run")
        raise RuntimeError("pre_run could not start the fixtures")


def test_a_raising_pre_run_still_gets_post_run(tmp_path: Path) -> None:
    # A RuntimeFault naming the plugin and the hook, so the CLI prints one message, not a traceback.
    with pytest.raises(RuntimeFault, match=r"pre_run\(\) raised RuntimeError: pre_run could not") as caught:
        _report(_PreRunRaises(), [str(REPO / "scenarios" / "artifacts")], tmp_path)
    assert caught.value.context["hook"] == "pre_run"
    assert reference_double.LOG == ["build", "pre_run", "post_run"]


class _NeverStarts(reference_double.PlayingRuntime):  # type: ignore[misc]
    def provision_reference(self, config: AgentConfig, case: ReferenceCase, mcps: Any = None) -> Any:
        raise RuntimeUnavailableError("the runtime container exited at start (exit code 3)", hint="fix it")


class _NeverStartsPlugin(reference_double.Plugin):  # type: ignore[misc]
    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> Any:
        return _NeverStarts()


def _written(case: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    trace = Path(case.trace)
    score = trace.with_name(trace.name.replace(".trace.json", ".score.json"))
    return json.loads(trace.read_text()), json.loads(score.read_text())


def test_a_case_that_fails_before_its_first_turn_writes_trace_and_sidecar(tmp_path: Path) -> None:
    report = _report(_NeverStartsPlugin(), [str(REPO / "scenarios" / "artifacts")], tmp_path)
    assert report.cases and {(c.verdict, c.subkind) for c in report.cases} == {
        (Verdict.ERROR, ErrorKind.SETUP)
    }
    assert not any(c.harness_fault for c in report.cases)  # the runtime's fault, not Wind Tunnel's
    for case in report.cases:
        assert "exited at start" in case.detail
        trace, score = _written(case)
        assert trace["reference_case"] == case.case and trace["turns"] == []
        assert trace["error"]["kind"] == "setup" and "exited at start" in trace["error"]["message"]
        assert score["status"] == "error" and score["error"]["cause"] == "RuntimeUnavailableError"
    assert len(list(report.out_dir.rglob("*.trace.json"))) == len(report.cases)


def test_a_probe_factory_error_is_a_harness_setup_error_with_its_trace(tmp_path: Path) -> None:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))

    def broken(_mcps: Any) -> Any:
        raise KeyError("billing")

    broken_pack = dataclasses.replace(pack, state_probe_factory=broken)
    loaded = load_runtime_plugin("plugins.reference_double:honest")
    report = run_selftest(
        loaded, select([broken_pack], Selection()), SelftestOptions(out_root=tmp_path, lock_dir=tmp_path)
    )
    assert {(c.verdict, c.subkind, c.harness_fault) for c in report.cases} == {
        (Verdict.ERROR, ErrorKind.SETUP, True)
    }
    trace, score = _written(report.cases[0])
    assert "state_probe_factory raised KeyError" in trace["error"]["message"]
    assert score["status"] == "error"
    assert reference_double.LOG.count("stop_mcps") == len(report.cases)  # the mocks still stopped
