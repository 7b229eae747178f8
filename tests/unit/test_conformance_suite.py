"""The conformance suite's rule (poisons fail exactly their check; expected failures may not pass) and the
kit's status mapping, over the repository's own suite data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel._config import SUITE_VERSION
from windtunnel._conformance.kit import CHECK_IDS, Check, run_check
from windtunnel._conformance.model import CheckFailed, NotMeasured, OptionalAbsent
from windtunnel._conformance.subject import Subject
from windtunnel._conformance.suite import Suite
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._drivers.in_memory import InMemoryRuntime
from windtunnel.errors import ConfigFileError, HarnessError, RuntimeFault

REPO = Path(__file__).resolve().parents[2]
SUITE = Suite.load(REPO / "conformance", SUITE_VERSION)


def test_repository_suite_scores_every_check_and_names_a_poison_per_fault() -> None:
    # The fault checks (faults/...) and the MCP client checks (mcp_client/...) are observations: recorded,
    # judged for poisons, not scored.
    observations = ("faults/", "mcp_client/")
    assert set(SUITE.requirements.scored) == {
        check for check in CHECK_IDS if not check.startswith(observations)
    }
    assert set(SUITE.poisons.values()) <= set(CHECK_IDS)
    # Every poison manifest under runtimes/<runtime>/poison/<fault>/ is listed, as <runtime>-poison-<fault>.
    manifests = {
        f"{p.parents[2].name}-poison-{p.parent.name}"
        for p in (REPO / "runtimes").glob("*/poison/*/runtime.toml")
    }
    assert set(SUITE.poisons) == manifests


def test_every_check_has_a_poison_that_bites_it_except_the_positive_only_ones() -> None:
    # response_shapes, teardown... have or need no runtime fault; every other check is proven to bite.
    caught = {check for checks in SUITE.caught_by.values() for check in checks}
    without_poison = set(CHECK_IDS) - set(SUITE.poisons.values()) - caught
    # faults/model_slow bites a runtime that declares a deadline it does not keep (test_minimal_runtime.py)
    positive_only = {"response_shapes", "unsupported_config", "reference_capability", "recovery"}
    # faults/oom: a killed process cannot fabricate an answer, and the class it belongs to (a sandbox that
    # lost its state, recorded as passed) is the silent_restart poison's. faults/disk_full: the reference
    # needs no disk, and what a runtime that does may get wrong (a failure swallowed, an answer made up) is
    # the swallow_tool_errors and answer_on_model_error poisons' class. Their rules: test_sandbox.py.
    unproven = {"faults/model_slow", "faults/oom", "faults/disk_full"}
    assert without_poison <= positive_only | unproven


def test_requirement_set_v1_keeps_its_checks_and_v2_adds_the_new_ones() -> None:
    v1 = Suite.load(REPO / "conformance", "1").requirements
    assert v1.version == "1" and "tool_call_ids" not in v1.scored
    assert set(v1.scored) < set(SUITE.requirements.scored)
    assert {"tool_call_ids", "config_reaches_model"} <= set(SUITE.requirements.scored)


def test_requirement_set_v4_adds_the_three_view_checks_and_v3_stays_as_it_was() -> None:
    v3 = Suite.load(REPO / "conformance", "3").requirements
    v4 = Suite.load(REPO / "conformance", "4").requirements
    assert {"three_views_agree", "tool_errors", "final_answer"}.isdisjoint(v3.scored)
    assert set(v4.scored) == set(v3.scored) | {"three_views_agree", "tool_errors", "final_answer"}


def test_requirement_set_v5_adds_long_results_session_attribution_and_model_wire() -> None:
    v4 = Suite.load(REPO / "conformance", "4").requirements
    added = {"long_tool_results", "session_attribution", "model_wire"}
    assert SUITE.requirements.version == SUITE_VERSION == "5"
    assert added.isdisjoint(v4.scored)
    assert set(SUITE.requirements.scored) == set(v4.scored) | added


def test_poison_must_fail_exactly_its_check() -> None:
    poison = "reference-poison-keep_conversation_across_reset"  # of [catches]: judged on every check
    assert SUITE.judge(poison, "reset_isolation", CheckStatus.FAILED).ok
    assert not SUITE.judge(poison, "reset_isolation", CheckStatus.PASSED).ok
    assert not SUITE.judge(poison, "reset_isolation", CheckStatus.NOT_MEASURED).ok
    assert not SUITE.judge(poison, "teardown", CheckStatus.FAILED).ok
    assert SUITE.judge(poison, "teardown", CheckStatus.PASSED).ok
    # An unscored check it is not named for decides no verdict: an observation, whatever its status (the
    # MCP suite's checks are not_measured in a runner container without npm; a certify of it is still valid).
    for status in (CheckStatus.NOT_MEASURED, CheckStatus.FAILED, CheckStatus.PASSED):
        assert SUITE.judge(poison, "mcp_client/initialize", status).ok
    assert not SUITE.judge(poison, "mcp_client/initialize", CheckStatus.ERROR).ok  # Wind Tunnel's own fault


def _suite_dir(tmp_path: Path, expected: str) -> Path:
    (tmp_path / "poisons.toml").write_text('[catches]\n"poisoned" = "sampling"\n')
    (tmp_path / "requirements").mkdir(exist_ok=True)
    latest = f"v{SUITE_VERSION}.toml"
    (tmp_path / "requirements" / latest).write_text(
        (REPO / "conformance" / "requirements" / latest).read_text()
    )
    (tmp_path / "expected_failures.toml").write_text(expected)
    return tmp_path


KNOWN = frozenset({"x", "poisoned"})


def test_expected_failures_need_a_reason_and_may_not_pass(tmp_path: Path) -> None:
    entry = '[[expected]]\nruntime = "x"\ncheck = "sampling"\nreason = {reason}\n'
    with pytest.raises(ConfigFileError, match="has no reason"):
        Suite.load(_suite_dir(tmp_path, entry.format(reason='""')), runtimes=KNOWN)
    suite = Suite.load(_suite_dir(tmp_path, entry.format(reason='"SDK drops it"')), runtimes=KNOWN)
    assert suite.judge("x", "sampling", CheckStatus.FAILED).ok
    started_passing = suite.judge("x", "sampling", CheckStatus.PASSED)
    assert not started_passing.ok and "now passes" in started_passing.message


@pytest.mark.parametrize(
    ("runtime", "check", "message"),
    [
        ("x", "samplin", "unknown check 'samplin'"),
        ("no-such-runtime", "sampling", "unknown runtime 'no-such-runtime'"),
    ],
)
def test_expected_failures_must_name_real_checks_and_runtimes(
    tmp_path: Path, runtime: str, check: str, message: str
) -> None:
    entry = f'[[expected]]\nruntime = "{runtime}"\ncheck = "{check}"\nreason = "because"\n'
    with pytest.raises(ConfigFileError, match=message) as raised:
        Suite.load(_suite_dir(tmp_path, entry), runtimes=KNOWN)
    assert raised.value.field == "expected[0]"  # type: ignore[attr-defined]


def test_poisons_must_name_real_runtimes(tmp_path: Path) -> None:
    directory = _suite_dir(tmp_path, "")
    with pytest.raises(ConfigFileError, match="unknown runtime 'poisoned'"):
        Suite.load(directory, runtimes=frozenset({"x"}))


def test_known_runtimes_are_the_project_manifests() -> None:
    from windtunnel._conformance.suite import known_runtimes

    known = known_runtimes(REPO / "conformance")
    assert {"reference", "openai-agents", "pydantic-ai", *SUITE.poisons} <= known


def test_harness_errors_never_count_for_or_against_a_runtime() -> None:
    judgement = SUITE.judge("reference", "sampling", CheckStatus.ERROR)
    assert not judgement.ok and "Wind Tunnel itself failed" in judgement.message


def _subject() -> Subject:
    return Subject(name="in_memory", runtime=InMemoryRuntime())


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (None, CheckStatus.PASSED),
        (CheckFailed("broken", {"k": 1}), CheckStatus.FAILED),
        (NotMeasured("no ability"), CheckStatus.NOT_MEASURED),
        (OptionalAbsent("usage not reported: unknown"), CheckStatus.INFO),
        (RuntimeFault("runtime crashed"), CheckStatus.FAILED),
        (HarnessError("engine gone"), CheckStatus.ERROR),
        (KeyError("bug"), CheckStatus.ERROR),
    ],
)
def test_run_check_maps_outcomes_to_statuses(raised: Exception | None, status: CheckStatus) -> None:
    def body(subject: Subject) -> dict[str, Any]:
        if raised is not None:
            raise raised
        return {"fine": True}

    result = run_check(Check("probe", "probe", "the clause", body), _subject())
    assert result.status is status and result.runtime == "in_memory" and result.clause == "the clause"


def test_info_meets_a_requirement_but_never_catches_a_poison() -> None:
    """What a contract calls optional (INFO) never fails a correct runtime, and never counts as a poison
    caught: a poison must FAIL its named check."""
    scored = SUITE.requirements.scored[0]
    assert SUITE.judge("reference", scored, CheckStatus.INFO).ok
    assert not SUITE.judge("reference", scored, CheckStatus.NOT_MEASURED).ok
    poison, named = next(iter(SUITE.poisons.items()))
    assert not SUITE.judge(poison, named, CheckStatus.INFO).ok
    other = next(check for check in CHECK_IDS if check not in SUITE.caught_by[poison])
    assert SUITE.judge(poison, other, CheckStatus.INFO).ok


def test_every_check_names_a_clause_of_the_repositorys_docs_in_the_docs_table() -> None:
    from windtunnel._conformance.kit import CHECKS

    table = (REPO / "docs" / "conformance.md").read_text(encoding="utf-8")
    for check in CHECKS:
        assert check.clause.startswith("docs/") and "seed" not in check.clause
        assert f"| `{check.id}` |" in table


def test_checks_needing_scripted_inference_are_not_measured_on_in_memory() -> None:
    from windtunnel._conformance.kit import check_by_id

    result = run_check(check_by_id("intermediate_tool_calls"), _subject())
    assert result.status is CheckStatus.NOT_MEASURED and "provision_reference" in result.detail


def test_a_poison_skips_only_unscored_checks_it_is_not_named_for() -> None:
    poison = "reference-poison-teardown_raises"
    assert SUITE.proves_nothing(poison, "faults/model_429")
    assert not SUITE.proves_nothing(poison, "teardown")
    assert not SUITE.proves_nothing(poison, "sampling")
    assert not SUITE.proves_nothing("reference-poison-retry_storm", "faults/model_429")
    assert not SUITE.proves_nothing("reference", "faults/model_429")


def test_a_catches_only_poison_runs_only_the_checks_named_for_it(tmp_path: Path) -> None:
    """[catches_only]: a poison whose class is proven precise elsewhere runs its named checks alone, scored
    ones included; it is judged as any poison on what it runs; a poison in both tables is refused."""
    directory = _suite_dir(tmp_path, "")
    poisons = directory / "poisons.toml"
    poisons.write_text(poisons.read_text() + '[catches_only]\n"x" = ["tool_errors", "faults/mcp_error"]\n')
    suite = Suite.load(directory, runtimes=KNOWN | {"poisoned"})
    assert suite.only_named == {"x"} and suite.caught_by["x"] == ("tool_errors", "faults/mcp_error")
    assert suite.poisons["x"] == "tool_errors" and suite.is_poison("x")
    assert [c for c in CHECK_IDS if not suite.proves_nothing("x", c)] == ["tool_errors", "faults/mcp_error"]
    assert not suite.proves_nothing("poisoned", SUITE.requirements.scored[0])  # [catches]: every scored one
    assert suite.judge("x", "faults/mcp_error", CheckStatus.FAILED).ok
    assert not suite.judge("x", "tool_errors", CheckStatus.PASSED).ok
    # Run anyway (a `wt certify` of it), another check is an observation: its precision is proven elsewhere.
    assert suite.judge("x", "sampling", CheckStatus.FAILED).ok
    assert not suite.judge("poisoned", "tool_errors", CheckStatus.FAILED).ok
    poisons.write_text(poisons.read_text() + '"poisoned" = "sampling"\n')
    with pytest.raises(ConfigFileError, match=r"poisoned is listed in \[catches\] and in \[catches_only\]"):
        Suite.load(directory, runtimes=KNOWN | {"poisoned"})


IN_CONTAINERS = {
    "reference-poison-keep_conversation_across_reset",
    "reference-poison-teardown_raises",
    "reference-poison-attach_outside_network",
    "reference-poison-silent_restart",
    "minimal-responses-poison-speak_chat",
}
"""The poisons run over every scored check in containers, one per family of faults only a container shows:
state kept across reset (which on loopback leaks into the next check's runs), the driver's and the
container's faults, a wire spoken against its declaration."""


def test_the_repository_runs_each_agent_loop_poison_only_on_its_named_checks() -> None:
    """The agent-loop poisons (the reference's and the minimal runtime's WT_FAULT branches) and the other
    members of a container-level family are [catches_only]: one container check per named check; their
    precision is proven on loopback, or by their family's poison in IN_CONTAINERS."""
    assert set(SUITE.poisons) - SUITE.only_named == IN_CONTAINERS
    for poison in SUITE.only_named:
        assert [c for c in CHECK_IDS if not SUITE.proves_nothing(poison, c)] == [
            c for c in CHECK_IDS if c in SUITE.caught_by[poison]
        ]
