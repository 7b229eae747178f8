"""The one vocabulary (windtunnel._core.vocabulary): statuses, results, verdicts and the exit codes."""

from __future__ import annotations

import pytest

from windtunnel._core.vocabulary import (
    CERTIFY_EXIT,
    CertificationResult,
    Exit,
    Verdict,
    judged_exit,
    selftest_exit,
)
from windtunnel._signals import EXIT_CODES


def test_every_certification_result_has_its_exit_code() -> None:
    assert CERTIFY_EXIT == {
        CertificationResult.PASSED: 0,
        CertificationResult.FAILED: 1,
        CertificationResult.HARNESS_INVALID: 2,
    }


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        ([Verdict.PASS, Verdict.PASS], Exit.OK),
        ([Verdict.PASS, Verdict.GOLDEN_FAILED], Exit.FAILED),
        ([Verdict.POISON_PASSED], Exit.FAILED),
        ([Verdict.ERROR, Verdict.UNSUPPORTED], Exit.FAILED),  # a judged failure outranks unsupported
        ([Verdict.PASS, Verdict.UNSUPPORTED], Exit.USAGE),
        ([], Exit.USAGE),  # nothing selected
    ],
)
def test_selftest_exit(verdicts: list[Verdict], code: Exit) -> None:
    assert selftest_exit(verdicts) == code


@pytest.mark.parametrize(("passed", "code"), [([True, True], 0), ([True, False], 1), ([], 2)])
def test_judged_exit(passed: list[bool], code: int) -> None:
    assert judged_exit(passed) == code


@pytest.mark.parametrize(
    ("verdicts", "quarantined", "code"),
    [
        ([], 2, Exit.OK),  # only quarantined cases selected: recorded, never gating, but something ran
        ([Verdict.PASS], 1, Exit.OK),
        ([Verdict.GOLDEN_FAILED], 1, Exit.FAILED),  # a gating failure still fails
        ([], 0, Exit.USAGE),
    ],
)
def test_quarantined_cases_are_selected_but_never_gate(
    verdicts: list[Verdict], quarantined: int, code: Exit
) -> None:
    assert selftest_exit(verdicts, quarantined=quarantined) == code
    assert judged_exit([verdict is Verdict.PASS for verdict in verdicts], quarantined=quarantined) == code


def test_a_stop_signal_exits_with_the_vocabulary_s_code_128_plus_its_number() -> None:
    assert {sig.name: code for sig, code in EXIT_CODES.items()} == {
        "SIGINT": Exit.INTERRUPTED,
        "SIGTERM": Exit.TERMINATED,
        "SIGHUP": Exit.HANGUP,
    }
    assert all(code == 128 + int(sig) for sig, code in EXIT_CODES.items())
    assert int(Exit.ENVIRONMENT) == int(Exit.USAGE) == 2  # one code for bad input and a fault of the machine
