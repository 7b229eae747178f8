"""`wt prove --local` as users run it: a real subprocess over real packs, proofs files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from windtunnel._prove.proofs_file import read_proofs

REPO = Path(__file__).resolve().parents[2]
PROVE_PACKS = REPO / "tests" / "fixtures" / "prove_packs"
SHOP = str(PROVE_PACKS / "shop")
JAMMED = str(PROVE_PACKS / "jammed")


def wt(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WT_RUNS_DIR": str(tmp / "runs"), "WT_LOCK_DIR": str(tmp / "locks")}
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "prove", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def prove_json(tmp: Path, *args: str, code: int) -> dict[str, Any]:
    """Run `wt prove --local --format json`, check its exit code, return the report."""
    out = tmp / "report.json"
    done = wt(tmp, "--local", "--format", "json", "--out", str(out), *args)
    assert done.returncode == code, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["exit_code"] == code
    return report


def test_the_bundled_packs_are_proved_with_controls_and_no_leak(tmp_path: Path) -> None:
    done = wt(tmp_path, "--local")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("PROVED ") for line in lines) == 5, done.stdout
    assert "prove local (certification): 5 proved" in lines[-1]
    proofs_file = next((tmp_path / "runs" / "prove").glob("*/proofs.jsonl"))
    written = read_proofs(proofs_file)
    assert written.header is not None and written.header.selected == 5 and written.header.certification
    for proof in written.proofs:
        assert proof.code.value == "proved" and proof.leaks == [] and not proof.assumed_by_author
        kinds = {case.kind for case in proof.cases}
        assert kinds == {"golden", "poison"}, proof.scenario
        assert all(case.verdict == "pass" for case in proof.cases)


@pytest.mark.parametrize(
    ("scenario", "code", "field", "excerpt"),
    [
        ("no_control", "no_negative_control", None, None),
        (
            "leak_word_run",
            "answer_leaked",
            "prompt[1]",
            "charges only the tea although the customer asked for the whole basket",
        ),
        ("leak_number", "answer_leaked", "prompt[0]", "37.50"),
        ("leak_nested", "answer_leaked", "system_prompt", "GIFT-42"),
        ("source_unresolved", "source_unresolved", "sources[0]", "charges may be split across baskets"),
    ],
)
def test_each_defect_gives_its_code_with_excerpt_and_field(
    tmp_path: Path, scenario: str, code: str, field: str | None, excerpt: str | None
) -> None:
    report = prove_json(tmp_path, "--pack", SHOP, "--scenario", scenario, code=1)
    (proof,) = report["proofs"]
    assert proof["code"] == code
    defect = proof["defects"][0]
    assert (defect["code"], defect["field"], defect["excerpt"]) == (code, field, excerpt)
    done = wt(tmp_path, "--local", "--pack", SHOP, "--scenario", scenario)
    assert done.returncode == 1
    assert done.stdout.startswith(f"{code.upper():24} shop/{scenario}")
    if excerpt is not None:
        assert f"field: {field}" in done.stdout and f"excerpt: {excerpt!r}" in done.stdout


def test_37_50_in_the_prompt_leaks_the_expected_37_5_and_names_the_grader_field(tmp_path: Path) -> None:
    report = prove_json(tmp_path, "--pack", SHOP, "--scenario", "leak_number", code=1)
    grader_fields = {defect["grader_field"] for defect in report["proofs"][0]["defects"]}
    assert "expect.outcome.state[1].value" in grader_fields  # the gate expects 37.5; the prompt says 37.50


def test_a_nested_list_value_leaks_from_its_place_in_the_list(tmp_path: Path) -> None:
    report = prove_json(tmp_path, "--pack", SHOP, "--scenario", "leak_nested", code=1)
    assert report["proofs"][0]["defects"][0]["grader_field"] == "expect.outcome.state[3].value[1]"


def test_development_mode_proves_a_scenario_without_control_with_a_warning(tmp_path: Path) -> None:
    done = wt(tmp_path, "--local", "--development", "--pack", SHOP, "--scenario", "no_control")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("PROVED")
    assert "warning: scenario 'no_control' has no negative control" in done.stdout
    assert "(development)" in done.stdout


def test_a_scenario_without_sources_is_shown_assumed_by_the_author(tmp_path: Path) -> None:
    done = wt(tmp_path, "--local", "--pack", SHOP, "--scenario", "assumed")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "assumed by the author" in done.stdout.splitlines()[0]


def test_a_crash_is_broken_check_and_proving_goes_on(tmp_path: Path) -> None:
    proofs = tmp_path / "mine" / "proofs.jsonl"
    report = prove_json(tmp_path, "--pack", JAMMED, "--proofs", str(proofs), code=1)
    jammed, working = report["proofs"]
    assert (jammed["scenario"], jammed["code"]) == ("jammed_till", "broken_check")
    defect = jammed["defects"][0]
    assert defect["field"] == "charge-the-item"
    assert "RuntimeError: the till jammed on basket J-1" in defect["message"]
    assert (working["scenario"], working["code"]) == ("working_till", "proved")
    assert [proof.code.value for proof in read_proofs(proofs).proofs] == ["broken_check", "proved"]


def test_a_deadline_inside_the_safety_margin_leaves_every_scenario_validation_incomplete(
    tmp_path: Path,
) -> None:
    deadline = (datetime.now(UTC) + timedelta(seconds=90)).isoformat()
    report = prove_json(tmp_path, "--deadline-at", deadline, code=1)
    assert {proof["code"] for proof in report["proofs"]} == {"validation_incomplete"}
    message = report["proofs"][0]["defects"][0]["message"]
    assert "out of time" in message and "300 s safety margin" in message
    header = read_proofs(Path(report["proofs_file"])).header
    assert header is not None and header.deadline is not None and header.margin_s == 300.0


def test_mutate_reports_the_weak_gate_with_the_mutant_shown(tmp_path: Path) -> None:
    done = wt(tmp_path, "--local", "--mutate", "--pack", SHOP, "--scenario", "weak_gate")
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stdout.startswith("PROVED")  # the scenario is proved; only its gate is weak
    weak = [line for line in done.stdout.splitlines() if line.startswith("WEAK GATE")]
    assert any("charge argument amount: 37.5 -> 38.5 (+1)" in line for line in weak), done.stdout
    assert '"amount": 38.5' in done.stdout  # the mutant's decisions are shown
    mutation = json.loads(next((tmp_path / "runs" / "prove").glob("*/mutation.json")).read_text())
    assert any(m["verdict"] == "weak" for m in mutation["scenarios"][0]["mutants"])


def test_mutate_finds_no_weak_gate_in_the_bundled_packs(tmp_path: Path) -> None:
    report = prove_json(tmp_path, "--mutate", code=0)
    scenarios = report["mutation"]["scenarios"]
    assert len(scenarios) == 5 and all(s["mutants"] and not s["problems"] for s in scenarios)
    assert {m["verdict"] for s in scenarios for m in s["mutants"]} <= {"killed", "equivalent"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--deadline-at", "2026-12-01T18:00:00"), "has no time zone"),
        (("--deadline-at", "tomorrow evening"), "is not an ISO 8601 time"),
        (("--runtime", "reference"), "not allowed with argument --local"),
        (("--scenario", "no_such_scenario"), "matches nothing"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = wt(tmp_path, "--local", *args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_runtime_that_cannot_play_reference_cases_exits_2(tmp_path: Path) -> None:
    done = wt(tmp_path, "--runtime", "in_memory")
    assert done.returncode == 2
    assert "'in_memory' has no provision_reference()" in done.stderr


def test_a_selection_without_reference_cases_exits_2_as_selftest_does(tmp_path: Path) -> None:
    pack = tmp_path / "bare"
    pack.mkdir()
    (pack / "pack.py").write_text(
        "from windtunnel.api import Pack, Scenario\n"
        "PACK = Pack(name='bare', scenarios=[Scenario(name='no_cases', prompt='hi', target_facts=[['hi']])])\n"
    )
    done = wt(tmp_path, "--local", "--pack", str(pack))
    assert done.returncode == 2, done.stderr
    assert "the selection holds no reference cases (1 scenario(s): bare/no_cases)" in done.stderr
    assert "how to fix" in done.stderr and "Traceback" not in done.stderr
