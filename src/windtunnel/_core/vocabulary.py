"""One vocabulary: a check's status, a certify run's result, a self-test case's verdict, and the exit codes.

Each is one Enum, defined here and imported everywhere else (the bundle, the conformance kit, the stages,
the report and the CLI), so no stage maps one spelling onto another. A check status and a self-test
verdict are different concepts and stay apart: a rejected poison case is a failed Score with a PASS
verdict, and its check in the bundle is `passed`. So do a Score's status (windtunnel._score.models: a
scored run is passed, failed or an error, never unmeasured) and a proof's code (windtunnel._prove.models).
"""

from __future__ import annotations

from collections.abc import Collection
from enum import IntEnum, StrEnum


class CheckStatus(StrEnum):
    """The status of one check, in every stage, in the conformance kit's results and in the bundle.

    `passed` and `failed` judge the runtime; `error` is Wind Tunnel's own fault, never the runtime's;
    `not_measured` never counts as passed. `info` records what a contract calls optional: it is reported
    as neither passed nor failed, and a record carrying it is never scored (windtunnel._bundle.models).
    """

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    NOT_MEASURED = "not_measured"
    INFO = "info"


class CertificationResult(StrEnum):
    """A certify run's result (verdict.json): HARNESS_INVALID when Wind Tunnel's own self-checks failed."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    HARNESS_INVALID = "HARNESS_INVALID"


class Verdict(StrEnum):
    """A self-test case's verdict (`wt selftest`): whether the gate judged its reference case rightly."""

    PASS = "PASS"  # noqa: S105 - a verdict, not a password
    GOLDEN_FAILED = "GOLDEN_FAILED"
    POISON_PASSED = "POISON_PASSED"
    UNSUPPORTED = "UNSUPPORTED"
    ERROR = "ERROR"


class Exit(IntEnum):
    """Every `wt` verb's exit code.

    OK (0): everything judged passed: certify PASSED, every self-test case PASS, every scenario proved and
    no weak gate, a bundle valid. FAILED (1): something judged failed: a runtime failed a scored check,
    a case GOLDEN_FAILED, POISON_PASSED or ERROR, a scenario not proved, a bundle invalid; also a Wind
    Tunnel error of a verb that names no other code. USAGE (2): bad usage, nothing selected, a runtime
    that cannot run the self-tests (UNSUPPORTED), and for `wt certify` HARNESS_INVALID and harness errors
    (its own machinery failed, so nothing was judged). ENVIRONMENT (2, the same code as USAGE): a fault of
    the machine in every verb (no engine, the engine gone, no base image, a full or read-only disk), or an
    unexpected error. Stopped by a signal after the cleanup, 128 + its number as a shell reports it
    (windtunnel._signals): HANGUP (129) SIGHUP, INTERRUPTED (130) SIGINT or Ctrl-C, TERMINATED (143) SIGTERM.
    """

    OK = 0
    FAILED = 1
    USAGE = 2
    ENVIRONMENT = 2  # an alias of USAGE: one code, named for why
    HANGUP = 129
    INTERRUPTED = 130
    TERMINATED = 143


CERTIFY_EXIT: dict[CertificationResult, Exit] = {
    CertificationResult.PASSED: Exit.OK,
    CertificationResult.FAILED: Exit.FAILED,
    CertificationResult.HARNESS_INVALID: Exit.USAGE,
}


def selftest_exit(verdicts: Collection[Verdict], *, quarantined: int = 0) -> Exit:
    """0 every case PASS; 1 any GOLDEN_FAILED, POISON_PASSED or ERROR; 2 unsupported or none selected.

    `verdicts` are the gating cases'; `quarantined` counts the selected cases that never gate (their
    verdicts are recorded and never change the code, windtunnel._core.tiers)."""
    if not verdicts and not quarantined:
        return Exit.USAGE
    if set(verdicts) & {Verdict.GOLDEN_FAILED, Verdict.POISON_PASSED, Verdict.ERROR}:
        return Exit.FAILED
    if Verdict.UNSUPPORTED in verdicts:
        return Exit.USAGE
    return Exit.OK


def judged_exit(passed: Collection[bool], *, quarantined: int = 0) -> Exit:
    """0 when every judged item passed, 1 when any did not, 2 when nothing was selected to judge.

    `passed` holds the gating items; `quarantined` counts the selected items that never gate."""
    if not passed and not quarantined:
        return Exit.USAGE
    return Exit.OK if all(passed) else Exit.FAILED
