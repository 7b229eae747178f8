"""The recovery check: kill the runtime mid-turn, then prove that nothing stale is left and a fresh
provision runs a clean run to its scripted end."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from windtunnel._conformance.checks_state import plain_answer
from windtunnel._conformance.evidence import raise_for_run_error
from windtunnel._conformance.model import CheckFailed, NotMeasured
from windtunnel._conformance.subject import Subject, call, say, tools, two_step_script
from windtunnel._core.abilities import ContainerListingRuntime, KillableHandle, PrestartingRuntime
from windtunnel._core.agent_runtime import AgentHandle
from windtunnel._runner.evidence import drain_model_requests
from windtunnel.errors import RuntimeUnavailableError

PAUSE_S = 5.0  # the kit's `pause` tool holds the turn this long: the kill lands while it waits
FIRST_CALL_TIMEOUT_S = 60.0
DEATH_TIMEOUT_S = 60.0
POLL_S = 0.02
LEFTOVER = "unreachable"  # the killed case's last scripted answer: a plain handle must never get it


@dataclass(slots=True)
class Killed:
    """How the killed turn ended: an answer (the kill came too late) or the error it raised."""

    answered: bool = False
    error: BaseException | None = None
    killed_after_model_calls: int = 0


def recovery(subject: Subject) -> dict[str, Any]:
    """Kill the runtime while a turn waits on a tool: the turn fails as RuntimeUnavailable, no script or
    container is left behind, and a new provision runs the kit's scenario to its scripted end."""
    listing = subject.runtime if isinstance(subject.runtime, ContainerListingRuntime) else None
    before = _handed_out(subject, listing)
    with subject.scripted([tools(call("pause", seconds=PAUSE_S)), say(LEFTOVER)]) as session:
        if not isinstance(session.handle, KillableHandle):
            raise NotMeasured(f"{subject.name}'s handle cannot be killed from outside (no kill())")
        subject.needs_model_evidence(session)
        killed = _kill_mid_turn(session.handle, session.handle.kill)
    evidence: dict[str, Any] = {
        "killed_after_model_calls": killed.killed_after_model_calls,
        "kill": "answered"
        if killed.answered
        else f"{type(killed.error).__name__}: {killed.error}".splitlines()[0],
    }
    if killed.answered:
        raise NotMeasured(
            "the killed turn still answered (the kill came too late): recovery was not measured"
        )
    if not isinstance(killed.error, RuntimeUnavailableError):
        raise CheckFailed(
            f"the killed turn failed with {evidence['kill']}; a runtime that died mid-turn must surface as "
            "RuntimeUnavailableError, so the run is never scored",
            evidence,
        )
    _no_leftovers(subject, listing, before, evidence)
    evidence["after"] = _clean_run(subject)
    return evidence


def _kill_mid_turn(handle: AgentHandle, kill: Callable[[], None]) -> Killed:
    """Send a turn and kill the runtime as soon as the gateway has served its first model call."""
    killed = Killed()
    drain_model_requests(handle)

    def send() -> None:
        try:
            handle.send([{"role": "user", "content": "Pause, then answer."}], "wt-kit-recovery")
            killed.answered = True
        except BaseException as exc:  # noqa: BLE001 - how the turn died is the evidence
            killed.error = exc

    turn = threading.Thread(target=send, name="wt-kit-recovery", daemon=True)
    turn.start()
    deadline = time.monotonic() + FIRST_CALL_TIMEOUT_S
    while turn.is_alive() and time.monotonic() < deadline:
        seen = drain_model_requests(handle) or []
        killed.killed_after_model_calls += len(seen)
        if seen:
            break
        time.sleep(POLL_S)
    if turn.is_alive():
        kill()
    turn.join(DEATH_TIMEOUT_S)
    if turn.is_alive():
        raise CheckFailed(
            f"the killed runtime's turn neither failed nor answered within {DEATH_TIMEOUT_S:g}s"
        )
    return killed


def _no_leftovers(
    subject: Subject, listing: ContainerListingRuntime | None, before: set[str], evidence: dict[str, Any]
) -> None:
    """After the killed handle's teardown: no runtime container of it remains and its script is gone."""
    if listing is not None:
        stale = sorted(_handed_out(subject, listing) - before)
        evidence["stale_containers"] = stale
        if stale:
            raise CheckFailed(f"the killed runtime's container(s) {stale} survived its teardown", evidence)
    else:
        evidence["stale_containers"] = "not inspectable (the runtime cannot list its containers)"
    leftover = plain_answer(subject)
    evidence["plain_answer_after_kill"] = leftover
    if leftover == LEFTOVER:
        raise CheckFailed(
            "after the killed case's teardown a plain handle still got its scripted answer", evidence
        )


def _handed_out(subject: Subject, listing: ContainerListingRuntime | None) -> set[str]:
    """The run's runtime containers but the one started ahead for the next provision (never a handle's;
    a container started ahead and then handed to the killed handle is counted from then on, so it must go
    with that handle's teardown like any other)."""
    if listing is None:
        return set()
    ahead = subject.runtime.prestarted() if isinstance(subject.runtime, PrestartingRuntime) else frozenset()
    return set(listing.runtime_containers()) - ahead


def _clean_run(subject: Subject) -> dict[str, Any]:
    """A fresh provision runs the kit's scenario through the ordinary runner to its scripted end.

    Whether the calls it reports match the mocks, whether its answer is the model's (final_answer), or
    whether it passes the scenario's gate, is other checks' business: here the run must only complete as
    scripted (every scripted model call served, the calls made), with no runtime failure.
    """
    scenario = subject.pack.scenario("two_step")
    decisions = two_step_script()
    with subject.scripted(decisions) as session:
        result = session.run(scenario)
    raise_for_run_error(result.trace, session.run_failure)
    requests = result.trace.model_requests
    outcome = {
        "content": [turn.content for turn in result.trace.turns],
        "received": len(result.trace.mcp_calls or []),
        "model_calls": None if requests is None else len(requests),
    }
    # Without the gateway's log, the scripted answer is the only sign the script was followed to its end.
    served = (
        outcome["model_calls"] == len(decisions) if requests is not None else outcome["content"] == ["copied"]
    )
    if len(result.trace.turns) != 1 or outcome["received"] != 2 or not served:
        raise CheckFailed(
            f"after the kill, a fresh provision's run did not complete as scripted: {outcome}", outcome
        )
    return outcome
