"""http_inject (Contract C v1) against a real endpoint on loopback that the test programs per case."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from windtunnel._drivers.http_inject import (
    DEFAULT_TIMEOUT_S,
    DEFAULT_URL,
    HttpInjectPlugin,
    HttpInjectRuntime,
)
from windtunnel._net.server_thread import ServerThread
from windtunnel.api import Scenario, run_scenario
from windtunnel.errors import (
    ConfigFileError,
    EnvelopeError,
    ResetFailedError,
    RuntimeFault,
    RuntimeTimeoutError,
    RuntimeUnavailableError,
    UnsupportedConfigError,
)
from windtunnel.spi import AgentConfig, SamplingConfig


class Endpoint:
    """A Contract C endpoint whose answers the test sets; it records every request body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.inject: Any = {"content": "ok", "tool_calls": []}
        self.inject_status = 200
        self.reset_status = 200
        self.delay = 0.0

    async def _inject(self, request: Request) -> Response:
        self.requests.append(("inject", await request.json()))
        time.sleep(self.delay)
        if isinstance(self.inject, str):
            return Response(self.inject, status_code=self.inject_status)
        return JSONResponse(self.inject, status_code=self.inject_status)

    async def _reset(self, request: Request) -> Response:
        self.requests.append(("reset", None))
        return JSONResponse({}, status_code=self.reset_status)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/wt/inject", self._inject, methods=["POST"]),
                Route("/wt/reset", self._reset, methods=["POST"]),
            ]
        )


@pytest.fixture
def endpoint() -> Iterator[tuple[Endpoint, str]]:
    state = Endpoint()
    with ServerThread(state.app()) as server:
        yield state, server.url
    for handle in _HANDLES:
        handle.teardown()
    _HANDLES.clear()


_HANDLES: list[Any] = []


def handle_for(url: str, timeout_s: float = 5.0) -> Any:
    handle = HttpInjectRuntime(url, timeout_s).provision(AgentConfig())
    _HANDLES.append(handle)
    return handle


def test_sends_only_the_newest_user_turn_and_converts_calls(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.inject = {
        "content": "done",
        "tool_calls": [{"name": "b", "arguments": {"z": 1, "a": [2]}}, {"name": "a", "arguments": {}}],
        "usage": {"prompt_tokens": 3},
    }
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "?"},
        {"role": "user", "content": "second"},
    ]
    response = handle_for(url).send(messages, "s-1")
    assert state.requests == [
        ("inject", {"session_id": "s-1", "message": {"role": "user", "content": "second"}, "timeout_s": 5.0})
    ]
    message = response["choices"][0]["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["b", "a"]
    assert message["tool_calls"][0]["function"]["arguments"] == '{"z": 1, "a": [2]}'
    assert response["usage"] == {"prompt_tokens": 3}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "<body>"),
        ({"tool_calls": []}, "content"),
        ({"content": "x"}, "tool_calls"),
        ({"content": "x", "tool_calls": None}, "tool_calls"),
        ({"content": "x", "tool_calls": [], "extra": 1}, "extra"),
        ({"content": "x", "tool_calls": ["call"]}, "tool_calls[0]"),
        ({"content": "x", "tool_calls": [{"name": "a"}]}, "tool_calls[0].arguments"),
        ({"content": "x", "tool_calls": [{"name": "", "arguments": {}}]}, "tool_calls[0].name"),
        ({"content": "x", "tool_calls": [{"name": "a", "arguments": "{}"}]}, "tool_calls[0].arguments"),
        ({"content": "x", "tool_calls": [], "usage": 3}, "usage"),
        ("not json", "<body>"),
    ],
)
def test_strict_envelope_names_the_bad_field(endpoint: tuple[Endpoint, str], body: Any, field: str) -> None:
    state, url = endpoint
    state.inject = body
    with pytest.raises(EnvelopeError) as caught:
        handle_for(url).send([{"role": "user", "content": "hi"}], "s")
    assert caught.value.field == field  # type: ignore[attr-defined]


def test_error_status_names_the_cause(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.inject, state.inject_status = {"error": "model gateway: script exhausted"}, 502
    with pytest.raises(RuntimeFault, match="502: model gateway: script exhausted"):
        handle_for(url).send([{"role": "user", "content": "hi"}], "s")


def test_failed_reset_is_fatal(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.reset_status = 500
    with pytest.raises(ResetFailedError, match="/wt/reset answered 500"):
        handle_for(url).reset_state()


def test_timeout_and_unreachable(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    handle = handle_for(url, timeout_s=0.01)
    handle._client.timeout = 0.2  # the 5 s transport grace, shortened so the test stays fast
    state.delay = 0.6
    with pytest.raises(RuntimeTimeoutError):
        handle.send([{"role": "user", "content": "hi"}], "s")
    with pytest.raises(RuntimeUnavailableError):
        handle_for("http://127.0.0.1:9").send([{"role": "user", "content": "hi"}], "s")


def test_teardown_is_idempotent_and_silent(endpoint: tuple[Endpoint, str]) -> None:
    handle = handle_for(endpoint[1])
    handle.teardown()
    handle.teardown()
    with pytest.raises(RuntimeUnavailableError, match="torn down"):
        handle.send([{"role": "user", "content": "hi"}], "s")


def test_config_the_endpoint_cannot_honour_raises() -> None:
    runtime = HttpInjectRuntime()
    with pytest.raises(UnsupportedConfigError, match=r"sampling\.temperature"):
        runtime.provision(AgentConfig(sampling=SamplingConfig(temperature=0.0)))
    with pytest.raises(UnsupportedConfigError, match="system_prompt"):
        runtime.provision(AgentConfig(system_prompt="be nice"))


def test_env_is_read_at_build_not_import() -> None:
    default = HttpInjectPlugin(env={}).build("http_inject", "x", None)
    assert (default.url, default.timeout_s) == (DEFAULT_URL, DEFAULT_TIMEOUT_S)
    custom = HttpInjectPlugin(env={"WT_INJECT_URL": "http://127.0.0.1:1", "WT_INJECT_TIMEOUT_S": "7"}).build(
        "h", "x", None
    )
    assert (custom.url, custom.timeout_s) == ("http://127.0.0.1:1", 7.0)


@pytest.mark.parametrize(
    "url", ["localhost:8647", "127.0.0.1:8647", "ftp://127.0.0.1", "http://", "http://h:port"]
)
def test_a_url_that_is_not_http_is_refused_naming_the_variable(url: str) -> None:
    with pytest.raises(ConfigFileError, match=r"WT_INJECT_URL is .* not an http") as caught:
        HttpInjectPlugin(env={"WT_INJECT_URL": url}).build("http_inject", "x", None)
    assert caught.value.context["field"] == "WT_INJECT_URL"
    with pytest.raises(RuntimeUnavailableError, match="not an http"):
        HttpInjectRuntime(url).provision(AgentConfig())


def test_runs_through_the_ordinary_runner(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.inject = {
        "content": "artifact complete",
        "tool_calls": [{"name": "write", "arguments": {"safe": True}}],
    }
    scenario = Scenario(name="s", prompt="go", target_facts=[["artifact complete"]], must_call=["write"])
    (result,) = run_scenario(HttpInjectRuntime(url, 5.0), scenario, runtime_name="http_inject")
    assert result.score.passed, result.score.summary()
    assert [kind for kind, _ in state.requests] == ["reset", "inject"]
    assert json.loads(result.trace.turns[0].tool_calls[0]["function"]["arguments"]) == {"safe": True}
