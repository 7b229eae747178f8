"""The conformance kit: small named checks any runtime can run, each tied to the contract clause it enforces.

`run_check(check, subject)` maps outcomes to statuses: the check returns evidence (passed), raises
CheckFailed (failed), OptionalAbsent (info: the required part held, an optional part is absent),
NotMeasured (not_measured), or anything else, which is Wind Tunnel's own fault (error) and never counts
against the runtime.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from windtunnel._conformance import (
    checks_bytes,
    checks_calls,
    checks_config,
    checks_evidence,
    checks_faults,
    checks_mcp_client,
    checks_mcp_steps,
    checks_mcp_suite,
    checks_recovery,
    checks_results,
    checks_sandbox,
    checks_sessions,
    checks_state,
    checks_tool_faults,
    checks_views,
    checks_wire,
)
from windtunnel._conformance.model import CheckFailed, CheckResult, NotMeasured, OptionalAbsent
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel.errors import RuntimeFault, UnsupportedConfigError


@dataclass(frozen=True, slots=True)
class Check:
    """One check: its id (stable across requirement sets), a title, the contract clause it enforces (the
    table in docs/conformance.md names the same clause and the poison that proves the check bites)."""

    id: str
    title: str
    clause: str
    run: Callable[[Subject], dict[str, Any]]


_INJECT = "docs/contract-c.md, POST /wt/inject"
_RESET = "docs/contract-c.md, POST /wt/reset"
_CONTAINERS = "docs/contract-c.md, Runtimes in containers"
_WRITING = "docs/writing-a-runtime.md"

CHECKS: tuple[Check, ...] = (
    Check(
        "response_shapes",
        "response shapes accepted",
        f"{_INJECT}: the response is {{content, tool_calls[, usage]}}; content is the turn's answer",
        checks_calls.response_shapes,
    ),
    Check(
        "intermediate_tool_calls",
        "intermediate tool calls surface",
        f"{_INJECT}: tool_calls is the complete ordered transcript of the turn's tool calls, intermediate "
        "ones included (every call a mock received is reported)",
        checks_calls.intermediate_tool_calls,
    ),
    Check(
        "raw_tool_call_shapes",
        "tool-call shapes stay raw",
        f"{_INJECT}: each tool call's arguments as the model emitted them (decoded, key order kept, never "
        "normalised), all of them, in order",
        checks_calls.raw_tool_call_shapes,
    ),
    Check(
        "tool_call_ids",
        "tool results answer their calls",
        f"{_CONTAINERS}: in the gateway's dialect the runtime speaks, each tool result answers a call id of the "
        "assistant message before it (tool_call_id, tool_use_id, call_id), every call answered",
        checks_calls.tool_call_ids,
    ),
    Check(
        "tool_results_reach_model",
        "tool results reach the model",
        f"{_CONTAINERS}: tools are the MCP servers of WT_MCP_SERVERS: the result the model is sent for each "
        "call is what the MCP server returned for it",
        checks_results.tool_results_reach_model,
    ),
    Check(
        "long_tool_results",
        "long tool results reach the model byte for byte",
        f"{_CONTAINERS}: the result the model is sent for each call is what the MCP server returned for it, "
        "whatever its size (up to 64 KiB here) and content (multi-byte UTF-8, nested JSON, whitespace)",
        checks_bytes.long_tool_results,
    ),
    Check(
        "session_affinity",
        "session affinity",
        f"{_INJECT}: only the newest user turn is sent; the endpoint keeps its own history per session_id",
        checks_state.session_affinity,
    ),
    Check(
        "session_attribution",
        "model calls carry the session they serve",
        f"{_CONTAINERS}: X-WT-Session (optional) names the session_id of the turn a model call serves; no model "
        "call is made outside a turn",
        checks_sessions.session_attribution,
    ),
    Check(
        "reset_isolation",
        "reset isolation (the reset canary)",
        f"{_RESET}: wipes every session, history, memory store, search index and log",
        checks_state.reset_isolation,
    ),
    Check(
        "sampling",
        "sampling reaches the model",
        f"{_CONTAINERS}: WT_SAMPLING's knobs reach every model call; a runtime.toml declares the sampling "
        "fields it honours in [config] supported",
        checks_config.sampling,
    ),
    Check(
        "config_reaches_model",
        "declared config reaches the model",
        f"{_CONTAINERS}: WT_SYSTEM_PROMPT, WT_MODEL_NAME and WT_MCP_SERVERS reach every model call of a "
        "runtime that declares them",
        checks_config.config_reaches_model,
    ),
    Check(
        "unsupported_config",
        "unsupported config fields raise",
        f"{_CONTAINERS}: the manifest declares which AgentConfig fields the runtime honours; any other set "
        "field raises UnsupportedConfigError",
        checks_config.unsupported_config,
    ),
    Check(
        "rendered_prompt_and_usage",
        "rendered prompt and usage captured",
        f"{_INJECT}: usage (optional) is OpenAI-style usage, per model call in usage.calls or the turn's "
        "sum; when reported it must be what the gateway served (absent: INFO, usage unknown)",
        checks_evidence.rendered_prompt_and_usage,
    ),
    Check(
        "reference_capability",
        "reference cases get fresh handles; teardown removes the script",
        f"{_CONTAINERS}: every model call goes through WT_MODEL_BASE_URL (capabilities.reference), so a "
        "scripted case reaches only its own handle",
        checks_state.reference_capability,
    ),
    Check(
        "teardown",
        "teardown idempotent and non-raising",
        f"{_WRITING}: teardown() is idempotent and never raises (it runs in finally paths)",
        checks_state.teardown,
    ),
    Check(
        "recovery",
        "recovery after a kill",
        f"{_WRITING}: a runtime killed mid-turn is provisioned again from dirty state",
        checks_recovery.recovery,
    ),
    Check(
        "three_views_agree",
        "the model's, the mocks' and the runtime's views agree",
        f"{_INJECT}: tool_calls is the complete ordered transcript, each call as the model emitted it and "
        "the MCP server received it, repeated calls, later turns and calls after /wt/reset included; each "
        "result the model is sent is the server's answer",
        checks_views.three_views_agree,
    ),
    Check(
        "tool_errors",
        "tool errors reach the model and the trace",
        f"{_CONTAINERS}: tools are the MCP servers of WT_MCP_SERVERS: an error result (isError) or a JSON-RPC "
        "error reaches the model as that call's result and the report as the call, made once (no silent "
        "retry, no silent drop)",
        checks_views.tool_errors,
    ),
    Check(
        "final_answer",
        "the reported answer is the model's",
        f"{_INJECT}: content is the turn's answer: the model's last message of the turn as the gateway served it",
        checks_views.final_answer,
    ),
    Check(
        "model_wire",
        "model calls speak the declared wire",
        f"{_CONTAINERS}: every model call speaks the wire runtime.toml declares ([model] wire, WT_MODEL_WIRE: "
        "chat, messages or responses)",
        checks_wire.model_wire,
    ),
    Check(
        "egress_closed",
        "egress closed",
        "docs/design.md, Containers and network: the runtime reaches its peers (gateway, mocks) and nothing "
        "else: no default route, not the host, not other networks, not the metadata address",
        checks_evidence.egress_closed,
    ),
    *(
        Check(f"faults/{fault}", f"fault: {title}", f"docs/conformance.md, Faults: {title}", run)
        for fault, title, run in (
            *checks_faults.model_fault_checks(),
            *checks_tool_faults.tool_fault_checks(),
            ("silent_restart", checks_sandbox.TITLE, checks_sandbox.silent_restart),
            ("oom", checks_sandbox.OOM_TITLE, checks_sandbox.oom),
            ("disk_full", checks_sandbox.DISK_TITLE, checks_sandbox.disk_full),
        )
    ),
    *(
        Check(f"mcp_client/{name}", f"MCP client: {title}", f"docs/conformance.md, MCP client: {title}", run)
        for name, title, run in (*checks_mcp_client.MCP_CLIENT_CHECKS, *checks_mcp_steps.MCP_STEP_CHECKS)
    ),
    *(
        Check(
            f"mcp_client/{name}",
            f"MCP client: {title}",
            f"docs/conformance.md, The official suite's client scenarios: {name}",
            run,
        )
        for name, title, run in checks_mcp_suite.MCP_SUITE_CHECKS
    ),
)
CHECK_IDS: tuple[str, ...] = tuple(check.id for check in CHECKS)


def check_by_id(check_id: str) -> Check:
    for check in CHECKS:
        if check.id == check_id:
            return check
    raise KeyError(check_id)


def run_check(check: Check, subject: Subject) -> CheckResult:
    started = time.perf_counter()
    subject.recorded.clear()  # the conversations of this check's sessions only
    status, detail, evidence = CheckStatus.PASSED, "", {}
    try:
        evidence = check.run(subject)
        detail = "holds"
    except CheckFailed as failed:
        status, detail, evidence = CheckStatus.FAILED, failed.detail, failed.evidence
    except OptionalAbsent as absent:
        status, detail, evidence = CheckStatus.INFO, absent.detail, absent.evidence
    except NotMeasured as reason:
        status, detail = CheckStatus.NOT_MEASURED, str(reason)
    except (RuntimeFault, UnsupportedConfigError) as fault:
        status, detail = CheckStatus.FAILED, f"the runtime failed during the check: {fault}"
    except Exception as exc:  # noqa: BLE001 - anything else is the harness's fault, recorded, never the runtime's
        status, detail = CheckStatus.ERROR, f"{type(exc).__name__}: {exc}"
        evidence = {"traceback": traceback.format_exc(limit=8)}
    return CheckResult(
        id=check.id,
        title=check.title,
        clause=check.clause,
        runtime=subject.name,
        status=status,
        detail=detail,
        evidence=_jsonable(evidence),
        seconds=round(time.perf_counter() - started, 3),
        conversations=[c.model_copy(update={"title": f"{check.id}: {c.title}"}) for c in subject.recorded],
    )


def _jsonable(value: Any) -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(json.dumps(value, default=str))
    return data
