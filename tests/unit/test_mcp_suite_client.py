"""The harness side of the official MCP suite's client scenarios, without containers: the verdict read from
the suite's checks, the capability a client declares, the URL named by the alias, the reproducible tarball."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from windtunnel._conformance.checks_mcp_suite import SCENARIOS, undeclared, verdict
from windtunnel._conformance.kit import check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._engine.mcp_suite import by_alias
from windtunnel._engine.mcp_suite_image import pack_tree
from windtunnel._engine.npm_packs import NpmPackError
from windtunnel.errors import HarnessError


def initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    body = {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities}}
    return {"id": "incoming-request", "status": "INFO", "details": {"body": body}}


def test_a_failure_or_warning_of_the_suite_fails_naming_it() -> None:
    checks = [
        {"id": "mcp-client-initialization", "status": "SUCCESS"},
        {"id": "tool-add-numbers", "status": "FAILURE", "errorMessage": "Tool was not called by client"},
        {"id": "client-sse-retry-timing", "status": "WARNING", "description": "late"},
    ]
    problem = verdict(checks)
    assert problem is not None
    assert "FAILURE tool-add-numbers: Tool was not called by client" in problem
    assert "WARNING client-sse-retry-timing: late" in problem


def test_a_server_that_saw_nothing_is_a_failure_though_the_suite_passes_it() -> None:
    assert verdict([]) is not None
    assert "never reached it" in str(verdict([{"id": "incoming-request", "status": "INFO"}]))


def test_successes_and_info_pass() -> None:
    assert verdict([initialize({}), {"id": "tool-add-numbers", "status": "SUCCESS"}]) is None


def test_a_capability_is_undeclared_only_when_the_clients_initialize_leaves_it_out() -> None:
    assert undeclared([initialize({})], "elicitation")
    assert undeclared([initialize({"sampling": {}})], "elicitation")
    assert not undeclared([initialize({"elicitation": {}})], "elicitation")
    # Responses log their body as a string: never taken for the request.
    response = {"id": "outgoing-response", "status": "INFO", "details": {"body": "event: message"}}
    assert not undeclared([response], "elicitation")  # no initialize seen: the verdict fails it instead


def test_the_suites_localhost_url_is_named_by_the_containers_alias() -> None:
    assert by_alias("http://localhost:41857/mcp", "mcp-suite-ab12cd") == "http://mcp-suite-ab12cd:41857/mcp"
    assert by_alias("http://localhost:39169", "mcp-suite-x") == "http://mcp-suite-x:39169"
    with pytest.raises(HarnessError):
        by_alias("http://localhost/mcp", "mcp-suite-x")


def test_each_scenario_scripts_only_the_suites_own_tool_names() -> None:
    called = {s.name: [c.name for d in s.decisions for c in d.tool_calls] for s in SCENARIOS}
    assert called == {
        "initialize": [],
        "tools_call": ["add_numbers"],
        "elicitation-sep1034-client-defaults": ["test_client_elicitation_defaults"],
        "sse-retry": ["test_reconnection"],
    }


def test_the_packed_tree_depends_on_its_files_alone(tmp_path: Path) -> None:
    def install(root: Path, when: int) -> Path:
        package = root / "node_modules" / "pkg"
        (package / "bin").mkdir(parents=True)
        (package / "index.js").write_text("export default 1\n")
        (package / "bin" / "run").write_text("#!/bin/sh\n")
        (package / "bin" / "run").chmod(0o755)
        (root / "node_modules" / ".bin").mkdir()
        (root / "node_modules" / ".bin" / "run").symlink_to("../pkg/bin/run")
        for path in [package / "index.js", package / "bin" / "run"]:
            os.utime(path, (when, when))
        return root

    first, second = tmp_path / "a.tgz", tmp_path / "b.tgz"
    pack_tree(install(tmp_path / "one", 1_000_000), first)
    pack_tree(install(tmp_path / "two", 2_000_000), second)
    assert hashlib.sha256(first.read_bytes()).digest() == hashlib.sha256(second.read_bytes()).digest()
    assert b"node_modules/pkg/index.js" in gzip.decompress(first.read_bytes())
    (tmp_path / "two" / "node_modules" / "pkg" / "index.js").write_text("export default 2\n")
    pack_tree(tmp_path / "two", second)
    assert first.read_bytes() != second.read_bytes()


class _NoNpmHost:
    """A reference-capable runtime on a host without npm: the suite's image cannot be made."""

    def provision(self, config: Any, mcps: Any = None) -> Any:
        raise AssertionError("no runtime is provisioned when the suite cannot start")

    def provision_reference(self, config: Any, case: Any, mcps: Any = None) -> Any:
        raise AssertionError("no runtime is provisioned when the suite cannot start")

    def start_mcp_suite(self, scenario: str, *, client_timeout_s: float) -> Any:
        raise NpmPackError("`npm install` could not run: no npm", hint="install Node.js with npm on the host")


def test_a_host_without_npm_leaves_the_suite_checks_not_measured_saying_why() -> None:
    result = run_check(check_by_id("mcp_client/tools_call"), Subject(name="r", runtime=_NoNpmHost()))
    assert result.status is CheckStatus.NOT_MEASURED
    assert "could not be installed" in result.detail and "install Node.js with npm" in result.detail
