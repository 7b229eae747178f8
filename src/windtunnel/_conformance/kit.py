"""The conformance kit: small named checks any runtime can run, each tied to the section of docs/conformance.md it enforces.

`run_check(check, subject)` maps outcomes to statuses: the check returns evidence (passed), raises
CheckFailed (failed), NotMeasured (not_measured), or anything else, which is Wind Tunnel's own fault
(error) and never counts against the runtime.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel._conformance import (
    checks_calls,
    checks_config,
    checks_evidence,
    checks_recovery,
    checks_results,
    checks_state,
)
from windtunnel._conformance.model import CheckFailed, CheckResult, NotMeasured
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel.errors import RuntimeFault, UnsupportedConfigError


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    title: str
    passage: str
    run: Callable[[Subject], dict[str, Any]]


CHECKS: tuple[Check, ...] = (
    Check(
        "response_shapes",
        "response shapes accepted",
        "docs/conformance.md#response_shapes",
        checks_calls.response_shapes,
    ),
    Check(
        "intermediate_tool_calls",
        "intermediate tool calls surface",
        "docs/conformance.md#intermediate_tool_calls",
        checks_calls.intermediate_tool_calls,
    ),
    Check(
        "raw_tool_call_shapes",
        "tool-call shapes stay raw",
        "docs/conformance.md#raw_tool_call_shapes",
        checks_calls.raw_tool_call_shapes,
    ),
    Check(
        "tool_call_ids",
        "tool results answer their calls",
        "docs/conformance.md#tool_call_ids",
        checks_calls.tool_call_ids,
    ),
    Check(
        "tool_results_reach_model",
        "tool results reach the model",
        "docs/conformance.md#tool_results_reach_model",
        checks_results.tool_results_reach_model,
    ),
    Check(
        "session_affinity",
        "session affinity",
        "docs/conformance.md#session_affinity",
        checks_state.session_affinity,
    ),
    Check(
        "reset_isolation",
        "reset isolation (the reset canary)",
        "docs/conformance.md#reset_isolation",
        checks_state.reset_isolation,
    ),
    Check(
        "sampling",
        "sampling reaches the model",
        "docs/conformance.md#sampling",
        checks_config.sampling,
    ),
    Check(
        "config_reaches_model",
        "declared config reaches the model",
        "docs/conformance.md#config_reaches_model",
        checks_config.config_reaches_model,
    ),
    Check(
        "unsupported_config",
        "unsupported config fields raise",
        "docs/conformance.md#unsupported_config",
        checks_config.unsupported_config,
    ),
    Check(
        "rendered_prompt_and_usage",
        "rendered prompt and usage captured",
        "docs/conformance.md#rendered_prompt_and_usage",
        checks_evidence.rendered_prompt_and_usage,
    ),
    Check(
        "reference_capability",
        "reference cases get fresh handles; teardown removes the script",
        "docs/conformance.md#reference_capability",
        checks_state.reference_capability,
    ),
    Check(
        "teardown",
        "teardown idempotent and non-raising",
        "docs/conformance.md#teardown",
        checks_state.teardown,
    ),
    Check(
        "recovery",
        "recovery after a kill",
        "docs/conformance.md#recovery",
        checks_recovery.recovery,
    ),
    Check(
        "egress_closed",
        "egress closed",
        "docs/conformance.md#egress_closed",
        checks_evidence.egress_closed,
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
        passage=check.passage,
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


def run_kit(subject: Subject, checks: Sequence[Check] = CHECKS) -> list[CheckResult]:
    return [run_check(check, subject) for check in checks]
