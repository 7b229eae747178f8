"""The conformance suite's rule (poisons fail exactly their check; expected failures may not pass) and the
kit's status mapping, over the repository's own suite data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel._conformance.kit import CHECK_IDS, Check, run_check
from windtunnel._conformance.model import CheckFailed, CheckStatus, NotMeasured
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._runtimes.in_memory import InMemoryRuntime
from windtunnel.errors import ConfigFileError, HarnessError, RuntimeFault

REPO = Path(__file__).resolve().parents[2]
SUITE = Suite.load(REPO / "conformance")


def test_repository_suite_scores_every_check_and_names_a_poison_per_fault() -> None:
    assert set(SUITE.requirements.scored) == set(CHECK_IDS)
    assert len(SUITE.poisons) == 8 and set(SUITE.poisons.values()) <= set(CHECK_IDS)
    manifests = {p.parent.name for p in (REPO / "runtimes" / "reference" / "poison").glob("*/runtime.toml")}
    assert {name.removeprefix("reference-poison-") for name in SUITE.poisons} == manifests


def test_poison_must_fail_exactly_its_check() -> None:
    poison = "reference-poison-ignore_sampling"
    assert SUITE.judge(poison, "sampling", CheckStatus.FAILURE).ok
    assert not SUITE.judge(poison, "sampling", CheckStatus.SUCCESS).ok
    assert not SUITE.judge(poison, "sampling", CheckStatus.NOT_MEASURED).ok
    assert not SUITE.judge(poison, "teardown", CheckStatus.FAILURE).ok
    assert SUITE.judge(poison, "teardown", CheckStatus.SUCCESS).ok


def test_expected_failures_need_a_reason_and_may_not_pass(tmp_path: Path) -> None:
    for name in ("poisons.toml",):
        (tmp_path / name).write_text((REPO / "conformance" / name).read_text())
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "v1.toml").write_text(
        (REPO / "conformance" / "requirements" / "v1.toml").read_text()
    )
    (tmp_path / "expected_failures.toml").write_text(
        '[[expected]]\nruntime = "x"\ncheck = "sampling"\nreason = ""\n'
    )
    with pytest.raises(ConfigFileError, match="has no reason"):
        Suite.load(tmp_path)
    (tmp_path / "expected_failures.toml").write_text(
        '[[expected]]\nruntime = "x"\ncheck = "sampling"\nreason = "SDK drops it"\n'
    )
    suite = Suite.load(tmp_path)
    assert suite.judge("x", "sampling", CheckStatus.FAILURE).ok
    started_passing = suite.judge("x", "sampling", CheckStatus.SUCCESS)
    assert not started_passing.ok and "now passes" in started_passing.message


def test_harness_errors_never_count_for_or_against_a_runtime() -> None:
    judgement = SUITE.judge("reference", "sampling", CheckStatus.HARNESS_ERROR)
    assert not judgement.ok and "Wind Tunnel itself failed" in judgement.message


def _subject() -> Subject:
    return Subject(name="in_memory", runtime=InMemoryRuntime())


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (None, CheckStatus.SUCCESS),
        (CheckFailed("broken", {"k": 1}), CheckStatus.FAILURE),
        (NotMeasured("no ability"), CheckStatus.NOT_MEASURED),
        (RuntimeFault("runtime crashed"), CheckStatus.FAILURE),
        (HarnessError("engine gone"), CheckStatus.HARNESS_ERROR),
        (KeyError("bug"), CheckStatus.HARNESS_ERROR),
    ],
)
def test_run_check_maps_outcomes_to_statuses(raised: Exception | None, status: CheckStatus) -> None:
    def body(subject: Subject) -> dict[str, Any]:
        if raised is not None:
            raise raised
        return {"fine": True}

    result = run_check(Check("probe", "probe", "passage", body), _subject())
    assert result.status is status and result.runtime == "in_memory"


def test_checks_needing_scripted_inference_are_not_measured_on_in_memory() -> None:
    from windtunnel._conformance.kit import check_by_id

    result = run_check(check_by_id("intermediate_tool_calls"), _subject())
    assert result.status is CheckStatus.NOT_MEASURED and "provision_reference" in result.detail
