"""The runtime conformance suite (`nox -s conformance`): the kit over every runtime in runtimes/.

Real runtimes in real containers, with the real model gateway and MCP mocks. Each test is one check on
one runtime; the suite's own data (requirements/, poisons.toml, expected_failures.toml) says what must
happen: scored checks succeed, each poison fails exactly the check named for it, and a listed expected
failure that starts passing fails the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from windtunnel._conformance.model import CheckResult
from windtunnel._conformance.suite import Suite

SUITE = Suite.load(Path(__file__).parent)

pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    # The recovery check SIGKILLs runtime containers mid-request on purpose; the socket of an abandoned
    # request is reclaimed by the garbage collector, which pytest would otherwise turn into an error.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def test_conformance(wt_case: tuple[str, str], wt_run_check: Callable[[str, str], CheckResult]) -> None:
    runtime, check = wt_case
    result = wt_run_check(runtime, check)
    judgement = SUITE.judge(runtime, check, result.status)
    assert judgement.ok, (
        f"{judgement.message}\n  expected: {judgement.expected}\n  got: {result.status}: {result.detail}"
    )
