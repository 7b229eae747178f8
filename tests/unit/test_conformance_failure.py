"""A turn the runtime broke off mid-check: the scripted step it was on and the failure's evidence."""

from __future__ import annotations

from windtunnel._conformance.failure import failed_mid_turn, runtime_log_tail, scripted_step
from windtunnel._conformance.subject import call, say, tools
from windtunnel.errors import RuntimeFault

SCRIPT = (tools(call("lookup", key="alpha"), call("echo", n=1)), say("done"))


def test_the_step_names_what_was_served_and_what_was_due() -> None:
    assert scripted_step(SCRIPT, 0) == {
        "model_calls_served": 0,
        "steps_scripted": 2,
        "last_served": None,
        "next_due": "tool calls lookup(key), echo(n)",
    }
    assert scripted_step(SCRIPT, 1)["next_due"] == "answer 'done'"
    assert scripted_step(SCRIPT, 2)["next_due"] == "none (the script was used up)"


def test_the_failure_says_where_the_turn_broke_and_keeps_the_log() -> None:
    fault = RuntimeFault("POST /wt/inject answered HTTP 503")
    failed = failed_mid_turn(
        fault, text="Read alpha.", session_id="s-1", step=scripted_step(SCRIPT, 1), log=["boom"]
    )
    assert "'Read alpha.'" in failed.detail and "'s-1'" in failed.detail
    assert "after 1 of 2 scripted model call(s)" in failed.detail and "HTTP 503" in failed.detail
    assert failed.evidence["runtime_log"] == ["boom"] and failed.evidence["scripted_step"]["last_served"]
    no_log = failed_mid_turn(fault, text="t", session_id="s", step=scripted_step(SCRIPT, 0), log=None)
    assert "not available" in no_log.evidence["runtime_log"]


def test_a_handle_without_a_container_has_no_log_to_read() -> None:
    assert runtime_log_tail(object()) is None
