"""A real bundle for the report's tests: the plan and publish run over small real steps whose evidence
carries conversations, with evidence strings that try to break out of the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.unit.pipeline_steps import OTHER, Executor, build, config
from windtunnel._bundle import Signer
from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._conformance.model import CheckResult
from windtunnel._conversation.build import from_trace
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.plan import Step, execute
from windtunnel._pipeline.publish import Published, publish
from windtunnel._trace.models import Trace, Turn

HOSTILE = "<script>window.pwned = 1</script>"
BREAKOUT = '"></pre><img src=x onerror="window.pwned=2">'


def wire(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def hiding_trace(runtime: str) -> Trace:
    """A run whose runtime reported none of the two calls the mock received (one of them hostile)."""
    calls = [wire("call_1", "lookup", key="alpha"), wire("call_2", "store", key="beta", value=BREAKOUT)]
    user = {"role": "user", "content": f"Copy note alpha {HOSTILE}"}
    requests = [
        {"index": 0, "at": 1.0, "turn": 0, "model": "wt-scripted", "messages": [user], "tools": None,
         "sampling": {"temperature": 0}, "status": 200,
         "response": {"role": "assistant", "content": None, "tool_calls": calls}},
        {"index": 1, "at": 2.0, "turn": 0, "model": "wt-scripted", "sampling": {"temperature": 0}, "status": 200,
         "messages": [user, {"role": "assistant", "tool_calls": calls},
                      {"role": "tool", "tool_call_id": "call_1", "content": HOSTILE},
                      {"role": "tool", "tool_call_id": "call_2", "content": "stored"}],
         "response": {"role": "assistant", "content": f"copied {HOSTILE}"}},
    ]  # fmt: skip
    received = [
        {"server": "notes", "name": "lookup", "arguments": {"key": "alpha"}, "result": HOSTILE, "at": 1.5},
        {"server": "notes", "name": "store", "arguments": {"key": "beta", "value": BREAKOUT}, "result": "stored", "at": 1.6},
    ]  # fmt: skip
    return Trace(
        run_id="r", scenario="two_step", pack="kit", runtime=runtime, agent_id="a", variant_id="v",
        session_id="s", started_at="2024-01-01T00:00:00Z",
        turns=[Turn(index=0, user=user["content"], response={}, shape="flat", content=f"copied {HOSTILE}",
                    tool_calls=[])],
        model_requests=requests, mcp_calls=received,
    )  # fmt: skip


def _conformance(ctx: StageContext) -> list[CheckRecord]:
    """intermediate_tool_calls' result as the conformance stage writes it: FAILED for the runtime under
    certification, with the conversation of its run (as Session.conversations() records it)."""
    hiding = ctx.run.name == OTHER
    result = CheckResult(
        id="intermediate_tool_calls",
        title="intermediate tool calls surface",
        clause="the docs",
        runtime=ctx.run.name,
        status=CheckStatus.FAILED if hiding else CheckStatus.PASSED,
        detail=f"the runtime reported [] {HOSTILE}" if hiding else "holds",
        conversations=[from_trace(hiding_trace(ctx.run.name))] if hiding else [],
    )
    evidence = ctx.write_evidence("intermediate_tool_calls", result.model_dump(mode="json"))
    status = CheckStatus.FAILED if hiding else CheckStatus.PASSED
    return [ctx.check("intermediate_tool_calls", status, result.detail, evidence=[evidence])]


def _selftest(ctx: StageContext) -> list[CheckRecord]:
    """A selftest case whose evidence is its trace file, as the selftest stage cites it."""
    path = ctx.traces_dir() / "kit" / "two_step.trace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hiding_trace(ctx.run.name).model_dump_json(indent=2), encoding="utf-8")
    return [ctx.check("kit/two_step/golden", CheckStatus.PASSED, "PASS", evidence=[ctx.relative(path)])]


PLAN = (build(), Step(Stage.CONFORMANCE, _conformance), Step(Stage.SELFTEST, _selftest))


def signer() -> Signer:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Signer.from_pem(pem, source="test key")


def make_bundle(tmp_path: Path, key: Signer | None = None) -> tuple[Path, Published]:
    """A FAILED, signed bundle in tmp_path/out (and tmp_path/out.tar.gz)."""
    outcome = execute(PLAN, config(tmp_path), Executor())
    published = publish(config(tmp_path), outcome, signer=key or signer())
    return tmp_path / "out", published
