"""`nox -s mcp_conformance`'s judgement and its failures: the skip list, the scenario table, npm's errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.mcp_conformance.pack import PACK
from tests.mcp_conformance.session import (
    ACCEPT,
    INITIALIZE,
    Row,
    Skip,
    failure_of,
    judge,
    load_skipped,
    rpc_body,
    summary,
)
from tests.mcp_conformance.toolchain import SessionError, ensure_suite, npm_failure, read_results
from windtunnel._core.mock_kit import MockHost
from windtunnel._mcp.server import mock_app

REPO = Path(__file__).resolve().parents[2]
OK = [{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "INFO"}]
FAILED = [
    {"id": "a", "status": "SUCCESS"},
    {"id": "c", "status": "FAILURE", "errorMessage": "MCP error -32601"},
]
WARNED = [{"id": "s", "status": "WARNING", "details": {"message": "no session ID"}}]
PROMPTS = Skip(scenario="prompts-list", reason="no prompts", capability="prompts")
IMAGES = Skip(scenario="tools-call-image", reason="JSON only")


def _judged(results: dict[str, Any], announced: set[str] | None = None) -> dict[str, Row]:
    skipped = {skip.scenario: skip for skip in (PROMPTS, IMAGES)}
    rows = judge(list(results), results, skipped, announced or {"tools"})
    return {row.scenario: row for row in rows}


def test_a_scenario_passes_only_without_failure_or_warning() -> None:
    assert failure_of(OK) is None
    assert failure_of(FAILED) == "FAILURE c: MCP error -32601"
    assert failure_of(WARNED) == "WARNING s: no session ID"  # the suite's own baseline counts warnings
    assert failure_of([]) == "the scenario recorded no checks"


def test_advertised_scenarios_must_pass_and_listed_ones_must_fail() -> None:
    rows = _judged({"ping": OK, "tools-list": FAILED, "prompts-list": FAILED, "tools-call-image": OK})
    assert (rows["ping"].ok, rows["ping"].result) == (True, "passed")
    assert not rows["tools-list"].ok and "MCP error -32601" in rows["tools-list"].note
    assert rows["prompts-list"].ok and rows["prompts-list"].note == "skipped by design: no prompts"
    assert not rows["tools-call-image"].ok and "passes: remove it" in rows["tools-call-image"].note


def test_a_listed_scenario_of_an_announced_capability_must_pass() -> None:
    rows = _judged({"prompts-list": FAILED}, announced={"tools", "prompts"})
    assert not rows["prompts-list"].ok and "announces 'prompts'" in rows["prompts-list"].note


def test_a_missing_result_and_a_stale_entry_are_unexpected() -> None:
    skipped = {PROMPTS.scenario: PROMPTS}
    rows = judge(["ping"], {}, skipped, {"tools"})
    assert [(row.scenario, row.result, row.ok) for row in rows] == [
        ("ping", "no result", False),
        ("prompts-list", "not in the suite", False),
    ]
    assert summary(rows).startswith("mcp_conformance: 0 passed, 0 skipped by design, 2 unexpected")


def test_the_committed_skip_list_is_short_and_names_no_capability_the_mock_announces() -> None:
    skipped = load_skipped()
    # The bar: every server scenario passes but at most two, each with a reason no mock could meet.
    assert 0 < len(skipped) <= 2 and all(skip.reason.strip() for skip in skipped.values())
    app = mock_app(MockHost(PACK.mcp_servers["everything"]))
    with TestClient(app, base_url="http://localhost") as client:
        reply = client.post("/mcp", json=INITIALIZE, headers=ACCEPT)
    assert reply.headers["mcp-session-id"]  # the everything mock serves sessions
    announced = set(rpc_body(reply.headers["content-type"], reply.text)["result"]["capabilities"])
    assert announced == {"tools", "resources", "prompts", "completions", "logging"}
    assert not {skip.capability for skip in skipped.values()} & announced


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[skipped]]\nscenario = "x"\n', "[[skipped]] #1 needs reason"),
        ('[[skipped]]\nscenario = "x"\nreason = "r"\nwhy = "?"\n', "unknown field(s) why"),
        ('[[skipped]]\nscenario = "x"\nreason = "r"\ncapability = 1\n', "capability must be a string"),
        (
            '[[skipped]]\nscenario = "x"\nreason = "r"\n[[skipped]]\nscenario = "x"\nreason = "r"\n',
            "a second time",
        ),
        ("[[skipped]\n", "cannot read it"),
    ],
)
def test_a_malformed_skip_list_is_one_line_naming_the_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "skipped_by_design.toml"
    path.write_text(text)
    with pytest.raises(SessionError, match=r"skipped_by_design\.toml") as raised:
        load_skipped(path)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_results_are_read_by_scenario_from_the_suites_directories(tmp_path: Path) -> None:
    for name in ("server-tools-call-error-2026-12-03T08-18-29-359Z", "server-ping-2026-12-03T08-18-29-400Z"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "checks.json").write_text('[{"id": "x", "status": "SUCCESS"}]')
    (tmp_path / "suite.log").write_text("")
    assert sorted(read_results(tmp_path)) == ["ping", "tools-call-error"]


NPM_REFUSED = """npm error code ECONNREFUSED
npm error syscall connect
npm error errno ECONNREFUSED
npm error FetchError: request to http://127.0.0.1:9/node failed, reason: connect ECONNREFUSED 127.0.0.1:9
"""
NPM_404 = """npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/nodee - Not found
"""


def test_npm_errors_become_one_line() -> None:
    refused = npm_failure(NPM_REFUSED)
    assert refused.startswith(
        "the npm registry cannot be reached (ECONNREFUSED: FetchError: request to http://127.0.0.1:9/node"
    )
    assert npm_failure(NPM_404).startswith("npm install node@22 @modelcontextprotocol/conformance@")
    assert "(E404: 404 Not Found - GET" in npm_failure(NPM_404)


def test_without_npm_the_session_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SessionError, match=r"^npm is not installed; .*apt-get install npm"):
        ensure_suite(tmp_path / "node")


def test_an_unreachable_registry_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # Real npm against a loopback port nothing listens on: what a machine without the registry sees.
    if shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs npm (.ci/run) for nox -s mcp_conformance")
        pytest.skip("npm is needed to show how the session reports an unreachable registry")
    env = {**os.environ, "npm_config_registry": "http://127.0.0.1:9/", "npm_config_fetch_retries": "0"}
    argv = [sys.executable, "-m", "tests.mcp_conformance.session", "--node-dir", str(tmp_path / "node")]
    argv += ["--out", str(tmp_path / "out")]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("mcp_conformance: the npm registry cannot be reached (ECONNREFUSED")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
