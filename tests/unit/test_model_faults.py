"""Scripted model faults: their JSON form round-trips, bad ones are refused naming the field, script mode serves them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from windtunnel._chat.mode import ChatRequest
from windtunnel._core.faults import ModelFault
from windtunnel._core.reference import ReferenceDecision
from windtunnel._gateway.script import ScriptMode, parse_install
from windtunnel._scenario.serialize import decisions_from_json, decisions_to_json
from windtunnel.errors import UsageError


def test_a_fault_round_trips_and_a_plain_decision_travels_as_before() -> None:
    decisions = (
        ReferenceDecision(fault=ModelFault(kind="rate_limited", retry_after=1.5)),
        ReferenceDecision(content="x", fault=ModelFault(kind="stall", after_events=3, seconds=2)),
        ReferenceDecision(content="plain"),
    )
    data = decisions_to_json(decisions)
    assert "fault" not in data[2]
    assert decisions_from_json(data) == decisions


@pytest.mark.parametrize(
    ("fault", "field"),
    [
        ({"kind": "teapot"}, "decisions[0].fault.kind"),
        ({"kind": "stall", "after_events": -1}, "decisions[0].fault.after_events"),
        ({"kind": "slow", "seconds": "soon"}, "decisions[0].fault.seconds"),
        ({"kind": "rate_limited", "retry_after": True}, "decisions[0].fault.retry_after"),
        ({"kind": "cut", "when": 1}, "decisions[0].fault.when"),
        ("cut", "decisions[0].fault"),
    ],
)
def test_a_bad_fault_is_refused_naming_its_field(fault: Any, field: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_install({"case": "c", "decisions": [{"content": None, "tool_calls": [], "fault": fault}]})
    assert caught.value.field == field  # type: ignore[attr-defined]


def test_a_decision_with_only_a_fault_installs() -> None:
    install = parse_install(
        {"case": "c", "decisions": [{"tool_calls": [], "fault": {"kind": "server_error"}}]}
    )
    assert install.decisions[0].fault == ModelFault(kind="server_error")


def test_script_mode_hands_the_fault_to_the_server_with_its_status() -> None:
    mode = ScriptMode()
    mode.store.install(
        "c", [ReferenceDecision(fault=ModelFault(kind="unavailable")), ReferenceDecision(content="y")]
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    ask = ChatRequest(method="POST", path="/v1/chat/completions", body=body)
    reply = asyncio.run(mode.complete(ask))
    assert (reply.status, reply.completion, reply.error) == (503, None, None)
    assert reply.fault == ModelFault(kind="unavailable") and reply.context["fault"]["kind"] == "unavailable"
    assert asyncio.run(mode.complete(ask)).fault is None
