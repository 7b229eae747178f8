"""The judgements of the mcp_client checks of what a server sends during a call, and their `[mcp]` keys.

The checks themselves run through the reference loop on loopback (test_conformance_kit: the reference
passes them, the poisons named for them fail them) and in containers (conformance/, `-k mcp_client`);
here each judgement is fed the exchanges the mock records, right and wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_runtimes_manifest import refusal, runtime
from windtunnel._conformance.checks_mcp_client import WAV_B64, _strings, native_audio, resources
from windtunnel._conformance.checks_mcp_steps import (
    SAMPLED,
    did,
    elicitation_problem,
    hung,
    sampling_problem,
)
from windtunnel._conformance.model import OptionalAbsent
from windtunnel._conformance.subject import Subject
from windtunnel._core.mock_steps import Elicit, Sample
from windtunnel._packs.loader import media_pack
from windtunnel._packs.mediapack.pack import ASK_TIMEOUT_S, EXPORT_TEXT, POLICY_TEXT, WAV
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._runtimes.mcp_client import McpClientPolicy

REFUSED = "JSON-RPC error -32601: Elicitation not supported"


@pytest.mark.parametrize(
    ("exchange", "hanging"),
    [
        ({"answer": None, "error": "JSON-RPC error -32001: timed out", "seconds": ASK_TIMEOUT_S}, True),
        ({"answer": None, "error": "timed out", "seconds": ASK_TIMEOUT_S - 0.2}, True),
        ({"answer": None, "error": REFUSED, "seconds": 0.01}, False),
        ({"answer": {"action": "decline"}, "seconds": ASK_TIMEOUT_S}, False),
        ({"answer": None, "error": "the client never retried the call"}, False),
    ],
)
def test_a_request_is_hanging_only_when_unanswered_for_the_mocks_whole_wait(
    exchange: dict[str, Any], hanging: bool
) -> None:
    assert hung(exchange) is hanging


@pytest.mark.parametrize(
    ("policy", "answer", "problem"),
    [
        ("refuse", None, None),
        ("refuse", {"action": "accept", "content": {}}, "it answered"),
        ("decline", {"action": "decline"}, None),
        ("decline", {"action": "cancel"}, "action 'cancel'"),
        ("cancel", None, "refused"),
        ("accept", {"action": "accept", "content": {"approve": False}}, None),
        ("accept", {"action": "accept", "content": {}}, "'approve' is a required property"),
        ("accept", {"action": "accept", "content": {"approve": "yes"}}, "breaks the requested schema"),
    ],
)
def test_an_elicitation_answer_is_judged_against_the_declared_policy(
    policy: str, answer: dict[str, Any] | None, problem: str | None
) -> None:
    found = elicitation_problem(policy, answer)
    assert found is None if problem is None else (found is not None and problem in found)


@pytest.mark.parametrize(
    ("policy", "answer", "problem"),
    [
        ("refuse", None, None),
        ("refuse", {"role": "assistant", "content": {"type": "text", "text": "ok"}}, "it answered"),
        ("model", {"role": "assistant", "content": {"type": "text", "text": SAMPLED}, "model": "m"}, None),
        ("model", {"role": "assistant", "content": {"type": "text", "text": "ok"}}, "not the model's reply"),
        ("model", {"role": "user", "content": {"type": "text", "text": SAMPLED}}, "not the model's reply"),
        ("model", None, "refused"),
    ],
)
def test_a_sampling_answer_is_judged_against_the_declared_policy(
    policy: str, answer: dict[str, Any] | None, problem: str | None
) -> None:
    found = sampling_problem(policy, answer)
    assert found is None if problem is None else (found is not None and problem in found)


def test_what_an_undeclared_client_did_is_named() -> None:
    assert did({"answer": None, "error": REFUSED}) == f"refused it ({REFUSED})"
    assert did({"answer": {"action": "decline"}}) == "answered decline"
    assert did({"answer": {"role": "assistant"}}) == "answered assistant"


def test_the_media_pack_sends_progress_logs_and_requests_and_needs_sessions() -> None:
    server = media_pack().mcp_servers["media"]()
    assert server.sessions and server.logs
    kinds = {name: [type(step).__name__ for step in tool.steps] for name, tool in server.tools.items()}
    assert kinds["export"] == ["Log", "Progress", "Log", "Progress"]
    assert kinds["approval"] == ["Elicit"] and kinds["digest"] == ["Sample"]
    asking = [step for name in ("approval", "digest") for step in server.tools[name].steps]
    assert all(isinstance(step, Elicit | Sample) and step.timeout_s == ASK_TIMEOUT_S for step in asking)
    outcome = server.call("export", {})
    assert outcome.result.wire()["content"] == [{"type": "text", "text": EXPORT_TEXT}]


def test_elicitation_and_sampling_are_read_and_a_variant_inherits_them(tmp_path: Path) -> None:
    base = runtime(tmp_path, "r", 'name = "r"\n[mcp]\nelicitation = "decline"\nsampling = "model"\n')
    assert load_manifest(base).mcp == McpClientPolicy(elicitation="decline", sampling="model")
    assert (
        load_manifest(runtime(tmp_path, "c", 'name = "c"\n[mcp]\nresources = "context"\n')).mcp.resources
        == "context"
    )
    variant = base / "poison" / "v"
    variant.mkdir(parents=True)
    (variant / "runtime.toml").write_text('name = "r-v"\nextends = "../.."\n[mcp]\nsampling = "refuse"\n')
    assert load_manifest(variant).mcp == McpClientPolicy(elicitation="decline", sampling="refuse")


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('elicitation = "ask"', "mcp.elicitation"),
        ('sampling = "yes"', "mcp.sampling"),
        ('resources = "tools"', "mcp.resources"),
    ],
)
def test_a_bad_policy_is_one_line_naming_the_key(tmp_path: Path, table: str, named: str) -> None:
    assert named in refusal(tmp_path, f"[mcp]\n{table}")


def test_resources_are_info_unless_declared_context_and_no_container_starts() -> None:
    for policy, named in ((None, "declares no resources policy"), ("none", 'declares resources = "none"')):
        subject = Subject(name="r", runtime=object(), mcp=McpClientPolicy(resources=policy))  # type: ignore[arg-type]
        with pytest.raises(OptionalAbsent, match=named):
            resources(subject)  # a scripted session would need a real runtime: none is started


def test_every_string_of_a_logged_model_call_is_searched_as_sent() -> None:
    request = {"messages": [{"role": "system", "content": POLICY_TEXT}, {"content": [{"text": "a"}]}], "n": 1}
    assert _strings(request) == ["system", POLICY_TEXT, "a"]


def test_native_audio_is_read_from_chat_input_audio_parts_only() -> None:
    part = {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}}
    assert native_audio([{"role": "user", "content": [part]}]) == [WAV]
    assert native_audio([{"type": "text", "text": WAV_B64}]) == []
    assert (
        native_audio({"type": "input_audio", "input_audio": {"data": "not base64!", "format": "wav"}}) == []
    )
