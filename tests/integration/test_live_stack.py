"""The live stack end to end: real containers, the real gateway, real MCP mocks, the reference runtime.

Nothing here is mocked. Every container carries this pytest session's label (WT_SESSION_LABEL), and the
session fixture fails if any outlives it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._core.vocabulary import Verdict
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._packs.loader import load_pack
from windtunnel._runner.output import RunWriter
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._selftest.engine import run_case
from windtunnel.api import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel.spi import AgentConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
MISBEHAVING = FIXTURES / "runtimes" / "misbehaving"


@pytest.fixture(scope="module")
def stack_env(
    docker_client: Any, base_image: str, run_label: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    runs = tmp_path_factory.mktemp("runs")
    return {
        **os.environ,
        "WT_BASE_IMAGE": base_image,
        "WT_SESSION_LABEL": run_label,
        "WT_RUNS_DIR": str(runs),
        "WT_LOCK_DIR": str(runs / "locks"),
        "PYTHONPATH": str(FIXTURES),
    }


def wt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_selftest_reference_all_pass_and_junit(stack_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "selftest.xml"
    done = wt(stack_env, "selftest", "--runtime", "reference", "--format", "junit", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    cases = ET.parse(out).getroot().findall(".//testcase")
    assert len(cases) == 12
    verdicts = {
        p.get("value") for p in ET.parse(out).getroot().iter("property") if p.get("name") == "verdict"
    }
    assert verdicts == {"PASS"}
    runs = Path(stack_env["WT_RUNS_DIR"]) / "selftest"
    assert len(list(runs.rglob("*.trace.json"))) == 12 and len(list(runs.rglob("*.score.json"))) == 12
    assert not (Path(stack_env["WT_RUNS_DIR"]) / "ledger.jsonl").exists()
    trace = json.loads(next(runs.rglob("golden-refund-the-mug.trace.json")).read_text())
    assert [r["messages"][-1]["role"] for r in trace["model_requests"]] == ["user", "tool", "tool"]
    assert [c["name"] for c in trace["mcp_calls"]] == ["lookup_order", "issue_refund"]
    assert trace["turns"][0]["rendered_prompt_hash"].startswith("sha256:")


def test_weak_gate_and_unreachable_golden_bite_in_containers(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "weak.json"
    done = wt(
        stack_env,
        "selftest",
        "--runtime",
        "reference",
        "--pack",
        str(FIXTURES / "packs" / "weak_gate"),
        "--format",
        "json",
        "--out",
        str(out),
    )
    assert done.returncode == 1, done.stderr[-3000:]
    verdicts = {(c["scenario"], c["case"]): c["verdict"] for c in json.loads(out.read_text())["cases"]}
    assert verdicts[("says_refunded_only", "wrong-amount")] == "POISON_PASSED"
    assert verdicts[("unreachable_golden", "says-something-else")] == "GOLDEN_FAILED"


def test_runtime_hiding_a_tool_call_is_error_integrity(stack_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "hide.json"
    done = wt(
        stack_env,
        "selftest",
        "--runtime",
        "reference-poison-hide_intermediate_tool_calls",
        "--scenario",
        "artifact_guard",
        "--format",
        "json",
        "--out",
        str(out),
    )
    assert done.returncode == 1
    cases = json.loads(out.read_text())["cases"]
    assert {(c["verdict"], c["subkind"]) for c in cases} == {("ERROR", "integrity")}
    assert "did not report" in cases[0]["detail"] and "write_artifact" in cases[0]["detail"]


def test_in_memory_selftest_is_unsupported(stack_env: dict[str, str]) -> None:
    done = wt(stack_env, "selftest", "--runtime", "in_memory")
    assert done.returncode == 2 and "UNSUPPORTED" in done.stdout


@pytest.fixture
def misbehaving(stack_env: dict[str, str], request: pytest.FixtureRequest) -> Iterator[Any]:
    mode, timeout = request.param
    env = {**stack_env, "WT_INJECT_TIMEOUT_S": str(timeout)}
    runtime = ContainerRuntimePlugin(load_manifest(MISBEHAVING / mode), env=env).build(
        "misbehaving", "test", None
    )
    yield runtime
    runtime.close()


def _case(runtime: Any, tmp_path: Path, case: ReferenceCase | None = None) -> Any:
    pack = load_pack(str(REPO / "scenarios" / "artifacts"))
    scenario = pack.scenario("artifact_guard")
    return run_case(
        runtime, "rt", pack, scenario, case or scenario.goldens[0], AgentConfig(), RunWriter(tmp_path)
    )


def _written(tmp_path: Path) -> tuple[int, int]:
    return len(list(tmp_path.rglob("*.trace.json"))), len(list(tmp_path.rglob("*.score.json")))


@pytest.mark.parametrize("misbehaving", [("envelope", 30)], indirect=True)
def test_malformed_envelope_is_error_naming_the_field(misbehaving: Any, tmp_path: Path) -> None:
    verdict = _case(misbehaving, tmp_path)
    assert verdict.verdict is Verdict.ERROR and verdict.subkind.value == "runtime"
    assert "tool_calls[0].arguments" in verdict.detail
    assert _written(tmp_path) == (1, 1)


@pytest.mark.parametrize("misbehaving", [("slow", 0.5)], indirect=True)
def test_runtime_timeout_is_error(misbehaving: Any, tmp_path: Path) -> None:
    verdict = _case(misbehaving, tmp_path)
    assert verdict.verdict is Verdict.ERROR and "within 5.5s" in verdict.detail
    assert _written(tmp_path) == (1, 1)


@pytest.mark.parametrize("misbehaving", [("slow", 60)], indirect=True)
def test_runtime_killed_mid_turn_is_error(misbehaving: Any, tmp_path: Path) -> None:
    def kill_soon() -> None:
        """Wait for the runtime container to be up and the turn in flight, then SIGKILL it."""
        labels = ["windtunnel.role=runtime", f"windtunnel.run={misbehaving.stack.run_id}"]
        for _ in range(600):
            running = misbehaving.stack.client.containers.list(filters={"label": labels})
            if running:
                time.sleep(1.5)
                running[0].kill()
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    verdict = _case(misbehaving, tmp_path)
    killer.join()
    assert verdict.verdict is Verdict.ERROR and verdict.subkind.value == "runtime"
    assert (
        "container exited mid-turn (exit code 137)" in verdict.detail
    )  # the death named, not just the hang-up
    assert verdict.seconds < 30  # noticed at once, not after the 65 s transport deadline
    assert _written(tmp_path) == (1, 1)


@pytest.fixture(scope="module")
def reference_runtime(stack_env: dict[str, str]) -> Iterator[Any]:
    runtime = ContainerRuntimePlugin(load_manifest(REPO / "runtimes" / "reference"), env=stack_env).build(
        "reference", "t", None
    )
    yield runtime
    runtime.close()


def test_script_exhausted_is_error_naming_the_gateway(reference_runtime: Any, tmp_path: Path) -> None:
    short = ReferenceCase(
        name="too-short",
        kind="golden",
        decisions=(ReferenceDecision(tool_calls=(ReferenceToolCall("write_artifact", {"safe": True}),)),),
    )  # built without a Scenario, so the authoring rules' validation does not stop the missing final decision
    verdict = _case(reference_runtime, tmp_path, short)
    assert verdict.verdict is Verdict.ERROR
    assert "script exhausted" in verdict.detail
    assert _written(tmp_path) == (1, 1)
    assert reference_runtime.stack.gateway().scripts()["global"] is None  # teardown removed the script


def test_an_invented_tool_is_evidence_not_an_integrity_error(reference_runtime: Any, tmp_path: Path) -> None:
    """The model calls a tool no mock serves; the runtime reports it and answers "unknown tool" itself."""
    invents = ReferenceCase(
        name="invents-a-tool",
        kind="golden",
        decisions=(
            ReferenceDecision(tool_calls=(ReferenceToolCall("teleport_artifact", {"to": "moon"}),)),
            ReferenceDecision(tool_calls=(ReferenceToolCall("write_artifact", {"safe": True}),)),
            ReferenceDecision(content="artifact complete"),
        ),
    )
    verdict = _case(reference_runtime, tmp_path, invents)
    assert verdict.verdict is Verdict.PASS, verdict.detail
    trace = json.loads(Path(verdict.trace).read_text())
    assert trace["unknown_tool_calls"] == [
        {"turn": 0, "name": "teleport_artifact", "arguments": {"to": "moon"}}
    ]
    assert [c["name"] for c in trace["mcp_calls"]] == ["write_artifact"]
