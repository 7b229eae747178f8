"""The harness's own check of the runtime's sandbox (`faults/silent_restart`): a runtime container whose main
process died and came back between two turns (a restart policy, a supervisor, an OOM kill answered by a
restart) lost its state, and Wind Tunnel must never record its next turn as passed (docs/conformance.md,
"Faults").

Two turns of one session with an idle pause between them, as benchmarks pause while they grade. The
engine's record of the container (its start, its main process) is read before and after; a handle that
watches its sandbox fails the turn of a restarted one itself. The check fails whenever the sandbox
restarted, and says whether the turn was failed as it must be or (a Wind Tunnel defect) passed.
"""

from __future__ import annotations

import time
from typing import Any

from windtunnel._conformance.checks_faults import session_id
from windtunnel._conformance.model import CheckFailed, NotMeasured
from windtunnel._conformance.subject import Subject, say
from windtunnel._core.abilities import SandboxWatchingHandle
from windtunnel.errors import RuntimeFault

IDLE_S = 2.5
"""The pause between the turns: long enough for a supervisor to recycle an idle sandbox, short enough to
cost little in every runtime's matrix."""
TITLE = "a sandbox restarted between turns is never recorded as a passed turn"


def silent_restart(subject: Subject) -> dict[str, Any]:
    """See the module docstring."""
    with subject.scripted(
        [say("wt-sandbox-first"), say("wt-sandbox-second")], name="fault-silent_restart"
    ) as session:
        handle = session.handle
        if not isinstance(handle, SandboxWatchingHandle):
            raise NotMeasured(
                f"{subject.name}'s handle cannot say which sandbox it runs in (no sandbox_identity())"
            )
        sid = session_id("silent_restart")
        evidence: dict[str, Any] = {"idle_s": IDLE_S, "sandbox_before": handle.sandbox_identity()}
        evidence["first"] = session.turn("Answer.", sid).read.content
        time.sleep(IDLE_S)
        try:
            evidence["second"] = session.turn_or_fault("Answer again.", sid).read.content
        except RuntimeFault as fault:
            evidence["second_failed"] = str(fault).splitlines()[0]
        evidence["sandbox_after"] = after = handle.sandbox_identity()
    restarted = after != evidence["sandbox_before"]
    if restarted and "second_failed" in evidence:
        raise CheckFailed(
            f"the runtime's container restarted between turns ({evidence['sandbox_before']}; then {after}); "
            f"the harness failed the turn, as it must: {evidence['second_failed']}",
            evidence,
        )
    if restarted:
        raise CheckFailed(
            f"the runtime's container restarted between turns ({evidence['sandbox_before']}; then {after}), "
            "yet its turn was recorded as passed: Wind Tunnel must fail the turn of a restarted sandbox",
            evidence,
        )
    if "second_failed" in evidence:
        raise CheckFailed(f"the turn after an idle pause failed: {evidence['second_failed']}", evidence)
    return evidence
