"""`wt run` as users run it: a real subprocess, real packs on disk, exit codes, reports, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def wt(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None, tmp: Path
) -> subprocess.CompletedProcess[str]:
    full_env = {
        **os.environ,
        "PYTHONPATH": str(FIXTURES),
        "WT_RUNS_DIR": str(tmp / "runs"),
        "WT_LOCK_DIR": str(tmp / "locks"),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_in_memory_over_bundled_packs_writes_junit_traces_and_sidecars(tmp_path: Path) -> None:
    out = tmp_path / "r.xml"
    done = wt("run", "--runtime", "in_memory", "--format", "junit", "--out", str(out), tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    suites = ET.parse(out).getroot().findall("testsuite")
    assert {s.get("name") for s in suites} == {"support_desk", "artifacts"}
    assert sum(int(s.get("tests", "0")) for s in suites) == 5
    assert all(s.get("failures") == "0" and s.get("errors") == "0" for s in suites)
    traces = list((tmp_path / "runs").rglob("*.trace.json"))
    sidecars = list((tmp_path / "runs").rglob("*.score.json"))
    assert len(traces) == len(sidecars) == 5
    ledger = (tmp_path / "runs" / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == 1 and '"passed": 5' in ledger[0]


def test_failing_gate_exits_1_and_names_the_check(tmp_path: Path) -> None:
    done = wt(
        "run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "failing_gate"), tmp=tmp_path
    )
    assert done.returncode == 1
    assert "target_facts[0]" in done.stdout and "goodbye" in done.stdout


def test_selection_flags_combine(tmp_path: Path) -> None:
    done = wt(
        "run",
        "--runtime",
        "in_memory",
        "--tier",
        "smoke",
        "--pack",
        "support_desk",
        "--format",
        "json",
        tmp=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '"refund_damaged_item"' in done.stdout and "artifact_guard" not in done.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--runtime", "nope"], "no runtime named 'nope'"),
        (["run", "--runtime", "in_memory", "--scenario", "nope*"], "--scenario 'nope*' matches nothing"),
        (["run", "--runtime", "in_memory", "--runs", "0"], "--runs: 0 is out of range: give 1 to 100000"),
        (["run", "--runtime", "in_memory", "--format", "xml"], "invalid choice: 'xml'"),
        (
            ["run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "broken_import")],
            "failed to import",
        ),
        (["run", "--runtime", "in_memory", "--pack", str(FIXTURES / "packs" / "bad_scenario")], "decision 0"),
        (["run", "--runtime", "plugins.cli_plugins:no_build"], "has no build() method"),
        (["run", "--runtime", "plugins.cli_plugins:missing"], "cannot be loaded"),
        (
            ["run", "--runtime", "in_memory", "--pack", "/nonexistent/pack"],
            "--pack '/nonexistent/pack': there is no pack directory or file at /nonexistent/pack",
        ),
        (["run"], "--runtime"),
    ],
)
def test_bad_input_is_one_clear_message_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    done = wt(*args, tmp=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert "how to fix" in done.stderr or "--help" in done.stderr


def test_a_pack_name_where_no_pack_is_loaded_is_named(tmp_path: Path) -> None:
    done = wt("run", "--runtime", "in_memory", "--pack", "nowhere", cwd=tmp_path, tmp=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "no packs were loaded (--pack 'nowhere' names none)" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_verbs(tmp_path: Path) -> None:
    done = wt("--help", tmp=tmp_path)
    assert done.returncode == 0 and "run" in done.stdout


def test_pre_run_and_post_run_once_even_on_abort(tmp_path: Path) -> None:
    log = tmp_path / "hooks.log"
    env = {"HOOK_LOG": str(log)}
    assert (
        wt(
            "run", "--runtime", "plugins.cli_plugins:hooks", "--pack", "support_desk", env=env, tmp=tmp_path
        ).returncode
        == 1
    )
    assert log.read_text().splitlines() == ["pre 3", "post"]
    log.unlink()
    aborted = wt(
        "run", "--runtime", "plugins.cli_plugins:hooks", env={**env, "HOOK_ABORT": "1"}, tmp=tmp_path
    )
    assert aborted.returncode == 1 and "abort in pre_run" in aborted.stderr
    assert log.read_text().splitlines() == ["pre 5", "post"]


def in_flight(tmp: Path, *args: str, limit: str) -> int:
    """The most sends the counting runtime saw in flight at once during one sweep."""
    log = tmp / f"in_flight-{limit}-{len(args)}.txt"
    done = wt(
        "run",
        "--runtime",
        "plugins.cli_plugins:CountingPlugin",
        *args,
        env={"CONCURRENCY_LIMIT": limit, "IN_FLIGHT_LOG": str(log)},
        tmp=tmp,
    )
    assert done.returncode == 1, done.stderr  # the counting runtime answers "done", failing the gates
    assert len(list((tmp / "runs").rglob("*.score.json"))) >= 5
    return int(log.read_text())


def test_concurrency_never_exceeds_the_plugin_limit(tmp_path: Path) -> None:
    concurrent = ("--scheduler", "concurrent", "--max-concurrency", "8")
    assert in_flight(tmp_path, *concurrent, limit="2") == 2  # capped by the plugin, and reached
    assert in_flight(tmp_path, *concurrent, limit="1") == 1
    assert in_flight(tmp_path, "--scheduler", "concurrent", "--max-concurrency", "3", limit="none") == 3
    assert in_flight(tmp_path, "--max-concurrency", "8", limit="none") == 1  # serial is one at a time


def report_and_ledger(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], ET.Element, str]:
    out = tmp / "r.xml"
    done = wt(
        "run", *args, "--format", "junit", "--out", str(out), env={"HOOK_LOG": str(tmp / "h.log")}, tmp=tmp
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    ledger = (tmp / "runs" / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == 1
    return done, ET.parse(out).getroot(), ledger[0]


def errors_of(report: ET.Element) -> dict[str, str]:
    return {
        f"{case.get('classname')}/{case.get('name')}": error.get("message", "")
        for case in report.iter("testcase")
        for error in case.findall("error")
    }


def test_a_mock_factory_that_raises_errors_its_runs_and_the_sweep_goes_on(tmp_path: Path) -> None:
    broken = str(FIXTURES / "packs" / "broken_factory")
    done, report, ledger = report_and_ledger(
        tmp_path, "--runtime", "in_memory", "--pack", broken, "--pack", "artifacts"
    )
    message = "error (setup): pack 'broken_factory': mcp_servers['ledger'] raised FileNotFoundError"
    assert errors_of(report) == {"broken_factory/reads_the_ledger[0]": message + ": fixtures/ledger.json"}
    assert "pack 'broken_factory': mcp_servers['ledger'] raised" in done.stderr
    passed = [
        case
        for case in report.iter("testcase")
        if case.get("classname") == "artifacts"
        and case.find("error") is None
        and case.find("failure") is None
    ]
    assert len(passed) == 2  # the other pack still ran, and passed
    assert '"errors": 1' in ledger and '"passed": 2' in ledger
    (trace,) = (tmp_path / "runs").rglob("broken_factory/reads_the_ledger/*.trace.json")
    assert '"kind": "setup"' in trace.read_text() and '"cause": "PackError"' in trace.read_text()


def test_provision_that_raises_errors_every_run_with_the_cause(tmp_path: Path) -> None:
    done, report, ledger = report_and_ledger(
        tmp_path, "--runtime", "plugins.cli_plugins:refusing", "--pack", "support_desk"
    )
    errors = errors_of(report)
    assert len(errors) == 3 and set(errors.values()) == {
        "error (runtime): runtime 'plugins.cli_plugins:refusing': provision() raised ConnectionRefusedError: "
        "backend at 127.0.0.1:9 refused the connection"
    }
    assert '"errors": 3' in ledger and "provision() raised ConnectionRefusedError" in done.stderr


def test_pre_run_that_raises_errors_every_run_naming_plugin_and_hook(tmp_path: Path) -> None:
    env_abort = {"HOOK_ABORT": "1"}
    out = tmp_path / "r.xml"
    done = wt(
        "run",
        "--runtime",
        "plugins.cli_plugins:hooks",
        "--pack",
        "support_desk",
        "--format",
        "junit",
        "--out",
        str(out),
        env={"HOOK_LOG": str(tmp_path / "h.log"), **env_abort},
        tmp=tmp_path,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    named = "runtime plugin 'plugins.cli_plugins:hooks': pre_run() raised RuntimeError: abort in pre_run"
    assert named in done.stderr
    errors = errors_of(ET.parse(out).getroot())
    assert len([name for name in errors if name.startswith("support_desk/")]) == 3
    assert all(named in errors[name] for name in errors if name.startswith("support_desk/"))
    assert errors["sweep/problem[0]"] == named
    assert (tmp_path / "h.log").read_text().splitlines() == ["pre 3", "post"]  # post_run still ran
    ledger = (tmp_path / "runs" / "ledger.jsonl").read_text()
    assert '"errors": 3' in ledger and "pre_run() raised" in ledger


def test_post_run_that_raises_is_a_sweep_problem_and_fails_it(tmp_path: Path) -> None:
    done = wt(
        "run",
        "--runtime",
        "plugins.cli_plugins:failing_post_run",
        "--pack",
        "artifacts",
        "--format",
        "json",
        env={"HOOK_LOG": str(tmp_path / "h.log"), "HOOK_ANSWER": "artifact complete"},
        tmp=tmp_path,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    named = "runtime plugin 'plugins.cli_plugins:failing_post_run': post_run() raised RuntimeError"
    assert len(report["problems"]) == 1 and report["problems"][0].startswith(named)
    assert report["runs"] and all(run["status"] != "error" for run in report["runs"])
    ledger = (tmp_path / "runs" / "ledger.jsonl").read_text()
    assert "could not remove the test containers" in ledger


def test_second_sweep_queues_on_the_machine_wide_lock(tmp_path: Path) -> None:
    log = tmp_path / "slow.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(FIXTURES),
        "WT_RUNS_DIR": str(tmp_path / "runs"),
        "WT_LOCK_DIR": str(tmp_path / "locks"),
        "SLOW_LOG": str(log),
    }
    command = [
        sys.executable,
        "-m",
        "windtunnel._cli.main",
        "run",
        "--runtime",
        "plugins.cli_plugins:slow",
        "--pack",
        "artifacts",
    ]
    first = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    second = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    first.wait(60), second.wait(60)
    events = [line.split() for line in log.read_text().splitlines()]
    assert [kind for kind, _ in events] == ["start", "end", "start", "end"], events
    assert float(events[2][1]) >= float(events[1][1])
