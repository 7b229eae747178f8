"""The harness's own checks of the runtime's sandbox (`faults/silent_restart`, `faults/oom`,
`faults/disk_full`): a runtime container whose main process died and came back between two turns (a
restart policy, a supervisor, an OOM kill answered by a restart), or one OOM-killed mid-turn, lost its
state, and Wind Tunnel must never record its turn as passed; one whose /tmp is full must report its turn
failed or answer it as scripted, never make something up (docs/conformance.md, "Faults").

Two turns of one session with an idle pause between them, as benchmarks pause while they grade. The
engine's record of the container (its start, its main process) is read before and after; a handle that
watches its sandbox fails the turn of a restarted one itself. The check fails whenever the sandbox
restarted, and says whether the turn was failed as it must be or (a Wind Tunnel defect) passed.
"""

from __future__ import annotations

import time
from typing import Any

from windtunnel._conformance.checks_bytes import compare_results, served_documents
from windtunnel._conformance.checks_faults import attempt, declared_unhandled, session_id
from windtunnel._conformance.checks_views import views_of
from windtunnel._conformance.model import CheckFailed, NotMeasured, OptionalAbsent
from windtunnel._conformance.subject import Subject, say, tools
from windtunnel._conversation.compare import INTEGRITY_KINDS, judge
from windtunnel._conversation.model import DiffKind
from windtunnel._core.abilities import (
    DiskFillingHandle,
    MemoryStarvingHandle,
    SandboxWatchingHandle,
    SmallTmpRuntime,
)
from windtunnel._core.reference import ReferenceToolCall
from windtunnel._packs.kitpack.documents import SIZES
from windtunnel._runner.evidence import mcp_calls, reset_mocks
from windtunnel.errors import RuntimeFault

IDLE_S = 2.5
"""The pause between the turns: long enough for a supervisor to recycle an idle sandbox, short enough to
cost little in every runtime's matrix."""
TITLE = "a sandbox restarted between turns is never recorded as a passed turn"
OOM_TITLE = "a runtime OOM-killed mid-turn: the turn is reported failed, the kill is recorded"
HEADROOM = 8 * 1024 * 1024
"""The memory left above what the runtime holds when its turn starts: room for a turn's ordinary work,
a quarter of the archive it is sent (windtunnel._packs.kitpack.documents)."""
ARCHIVE = "archive"


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


def oom(subject: Subject) -> dict[str, Any]:
    """`faults/oom`: the runtime's memory limit is lowered to what it holds plus HEADROOM, then a tool
    result four times that size (the kit's 32 MiB archive) is served to it mid-turn. Its process is killed
    for want of memory; the turn must end reported failed, and the harness records the kill."""
    declared_unhandled(subject.faults, "oom")
    script = [tools(ReferenceToolCall("read_document", {"name": ARCHIVE})), say("wt-oom-survived")]
    with subject.scripted(script, name="fault-oom") as session:
        handle = session.handle
        if not isinstance(handle, MemoryStarvingHandle) or not isinstance(handle, SandboxWatchingHandle):
            raise NotMeasured(
                f"{subject.name}'s handle cannot limit its sandbox's memory (no starve_memory())"
            )
        evidence: dict[str, Any] = {
            "served_bytes": SIZES[ARCHIVE],
            "sandbox_before": handle.sandbox_identity(),
        }
        evidence["memory"] = handle.starve_memory(HEADROOM)
        evidence["turn"] = attempt(session, "Read the archive document, then answer.", session_id("oom"))
        evidence["sandbox_after"] = handle.sandbox_identity()
        reset_mocks(session.mcps)  # the 32 MiB result is not kept as the session's evidence; its size is
    return judge_oom(evidence)


def judge_oom(evidence: dict[str, Any]) -> dict[str, Any]:
    """PASSED when the turn was reported failed and named the kill; FAILED when a sandbox that lost a
    process to the OOM killer was recorded as a passed turn; INFO (OptionalAbsent) when the runtime answered
    and nothing was killed: the fault did not happen."""
    turn = evidence["turn"]
    failed = str(turn.get("failed") or "")
    killed = "OOM-killed" in failed or "OOM kill" in str(evidence.get("sandbox_after") or "")
    evidence["oom_killed"] = killed
    if "answered" in turn and killed:
        raise CheckFailed(
            f"a process of the runtime's container was OOM-killed mid-turn ({evidence['sandbox_after']}), yet "
            f"the turn was recorded as passed with {turn['answered']!r}: Wind Tunnel must fail the turn of a "
            "sandbox that lost its state",
            evidence,
        )
    if "answered" in turn:
        raise OptionalAbsent(
            f"the runtime answered {turn['answered']!r} and no process of it was OOM-killed under a limit "
            f"{HEADROOM // 2**20} MiB above what it held, with a {SIZES[ARCHIVE] // 2**20} MiB result: the "
            "fault did not happen",
            evidence,
        )
    if not killed:
        raise CheckFailed(
            f"the turn failed, but not for want of memory: the engine records no OOM kill: {failed}", evidence
        )
    return evidence


DISK_TITLE = "a full /tmp mid-turn: the turn is reported failed or answered as scripted, never made up"
TMP_BYTES = 2 * 1024 * 1024
"""The size of the runtime's /tmp in the disk_full check: small, so filling it costs a few engine calls."""
DISK_DONE = "wt-disk-full-done"


def disk_full(subject: Subject) -> dict[str, Any]:
    """`faults/disk_full`: the runtime's container starts with a small /tmp, which the harness fills when
    the turn starts; the turn reads the kit's 64 KiB volume (a result a runtime may spill to disk), then
    answers. The turn reported failed holds; an answer holds when it is the scripted one and the three
    views agree on the call and its result (nothing lost to the full disk passed off as served)."""
    declared_unhandled(subject.faults, "disk_full")
    runtime = subject.reference()
    if not isinstance(runtime, SmallTmpRuntime):
        raise NotMeasured(f"{subject.name} cannot start its sandbox with a small /tmp (no small_tmp())")
    script = [tools(ReferenceToolCall("read_document", {"name": "volume"})), say(DISK_DONE)]
    with runtime.small_tmp(TMP_BYTES), subject.scripted(script, name="fault-disk_full") as session:
        handle = session.handle
        if not isinstance(handle, DiskFillingHandle):
            raise NotMeasured(f"{subject.name}'s handle cannot fill its sandbox's /tmp (no fill_tmp())")
        evidence: dict[str, Any] = {"tmp_bytes": TMP_BYTES, "disk": handle.fill_tmp()}
        text = "Read the volume document, then answer."
        evidence["turn"] = outcome = attempt(session, text, session_id("disk_full"))
        if "failed" in outcome:  # reported failed, visibly: what a runtime that needs the disk must do
            return judge_disk_full(evidence, [])
        conversation, served = views_of(session)
        requests = session.turns[-1].requests or []
        documents = served_documents(mcp_calls(session.mcps) or [])
    # The document's result is compared byte for byte (as long_tool_results does), the rest by the views.
    broken = judge(conversation, served, INTEGRITY_KINDS - {DiffKind.RESULT}).broken
    differing = [f.text for f in compare_results(requests, documents) if not f.held]
    return judge_disk_full(evidence, [*differing, *(b.text for b in broken)])


def judge_disk_full(evidence: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """PASSED for a turn reported failed, or answered as scripted with the views agreeing (no `problems`);
    FAILED for any other answer or a disagreement."""
    turn = evidence["turn"]
    if "failed" in turn:
        return evidence
    if turn.get("answered") != DISK_DONE:
        raise CheckFailed(
            f"with /tmp full the runtime answered {turn.get('answered')!r}; the model answered {DISK_DONE!r}: "
            "a turn the full disk broke must be reported failed, never answered with something else",
            evidence,
        )
    if problems:
        raise CheckFailed(f"with /tmp full the views disagree: {'; '.join(problems[:3])}", evidence)
    return evidence
