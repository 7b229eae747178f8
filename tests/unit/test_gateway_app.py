"""The gateway app in process (Starlette's TestClient): chat completions, refusals, the log and the admin API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._gateway.app import create_app
from windtunnel._gateway.live import LiveMode
from windtunnel._gateway.script import ScriptMode
from windtunnel._scenario.serialize import decisions_to_json

LOOKUP = ReferenceDecision(tool_calls=(ReferenceToolCall("lookup_order", {"order_id": "A-1"}),))
DONE = ReferenceDecision(content="order A-1 ships tomorrow")
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "system", "content": "You help."}, {"role": "user", "content": "Where is A-1?"}]


@pytest.fixture
def mode() -> ScriptMode:
    return ScriptMode()


@pytest.fixture
def client(mode: ScriptMode) -> Iterator[TestClient]:
    with TestClient(create_app(mode, models=["wt-model", "other"])) as test_client:
        yield test_client


def install(
    client: TestClient, case: str, decisions: list[ReferenceDecision], session: str | None = None
) -> None:
    body = {"case": case, "session": session, "decisions": decisions_to_json(decisions)}
    response = client.put("/wt/script", json=body)
    assert response.status_code == 200, response.text


def chat(
    client: TestClient, session: str | None = None, path: str = "/v1/chat/completions", **extra: Any
) -> Any:
    headers = {"X-WT-Session": session} if session else {}
    body = {"model": "wt-model", "messages": MESSAGES, "tools": TOOLS, **extra}
    return client.post(path, json=body, headers=headers)


def log(client: TestClient, since: int = 0) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = client.get("/wt/log", params={"since": since}).json()["entries"]
    return entries


def test_json_reply_serves_the_decision_with_usage(client: TestClient) -> None:
    install(client, "golden", [LOOKUP, DONE])
    reply = chat(client, temperature=0)
    assert reply.status_code == 200
    data = reply.json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    call = data["choices"][0]["message"]["tool_calls"][0]
    assert call["function"] == {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'}
    assert data["usage"]["total_tokens"] > 0
    assert chat(client).json()["choices"][0]["message"]["content"] == DONE.content


def test_the_log_keeps_prompt_tools_sampling_usage_and_answer(client: TestClient) -> None:
    install(client, "golden", [LOOKUP], session="s1")
    served = chat(client, session="s1", temperature=0.3, max_tokens=50, seed=1, tool_choice="auto").json()
    [entry] = log(client)
    assert entry["index"] == 0
    assert entry["session"] == "s1"
    assert entry["case"] == "golden"
    assert entry["mode"] == "script"
    assert entry["messages"] == MESSAGES
    assert entry["tools"] == TOOLS
    assert entry["sampling"] == {"temperature": 0.3, "max_tokens": 50, "seed": 1, "tool_choice": "auto"}
    assert entry["stream"] is False
    assert entry["usage"] == served["usage"]
    assert entry["usage_sent"] is True
    assert entry["response"] == served["choices"][0]["message"]
    assert entry["error"] is None and entry["error_code"] is None
    assert entry["status"] == 200
    assert entry["latency_ms"] >= 0
    assert entry["path"] == "/v1/chat/completions"


def test_no_script_is_an_openai_error_and_logged(client: TestClient) -> None:
    reply = chat(client, session="s9")
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert error["code"] == "no_script"
    assert error["type"] == "invalid_request_error"
    assert "'s9'" in error["message"]
    assert "choices" not in reply.json()
    [entry] = log(client)
    assert entry["error_code"] == "no_script"
    assert entry["error"] == error["message"]
    assert entry["response"] is None and entry["usage"] is None
    assert entry["messages"] == MESSAGES


def test_an_exhausted_script_yields_the_error_not_an_answer(client: TestClient) -> None:
    install(client, "short", [DONE])
    assert chat(client).status_code == 200
    for stream in (False, True):
        reply = chat(client, stream=stream)
        assert reply.status_code == 422
        assert reply.headers["content-type"].startswith("application/json")
        assert reply.json()["error"]["code"] == "script_exhausted"
    assert [e["error_code"] for e in log(client)] == [None, "script_exhausted", "script_exhausted"]


def test_a_streamed_reply_is_sse_with_a_usage_chunk_and_done(client: TestClient) -> None:
    install(client, "golden", [LOOKUP])
    reply = chat(client, stream=True, stream_options={"include_usage": True})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = reply.text.split("\n\n")
    assert events[-1] == ""
    assert events[-2] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-2]]
    assert all(event.startswith("data: ") for event in events[:-1])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    [entry] = log(client)
    assert entry["stream"] is True
    assert entry["usage"] == chunks[-1]["usage"]
    assert entry["usage_sent"] is True
    assert entry["response"]["tool_calls"][0]["function"]["name"] == "lookup_order"


def test_a_stream_without_include_usage_carries_no_usage_but_logs_it(client: TestClient) -> None:
    install(client, "golden", [DONE])
    reply = chat(client, stream=True)
    chunks = [json.loads(e.removeprefix("data: ")) for e in reply.text.split("\n\n")[:-2]]
    assert all("usage" not in chunk for chunk in chunks)
    [entry] = log(client)
    assert entry["usage"]["total_tokens"] > 0
    assert entry["usage_sent"] is False


def test_session_scripts_are_separate_and_win_over_the_global(client: TestClient) -> None:
    install(client, "global-case", [ReferenceDecision(content="global")])
    install(client, "a-case", [ReferenceDecision(content="for a")], session="a")
    assert chat(client, session="a").json()["choices"][0]["message"]["content"] == "for a"
    assert chat(client, session="b").json()["choices"][0]["message"]["content"] == "global"
    assert chat(client, session="a").json()["error"]["code"] == "script_exhausted"
    assert [(e["session"], e["case"]) for e in log(client)] == [
        ("a", "a-case"),
        ("b", "global-case"),
        ("a", "a-case"),
    ]


def test_bare_paths_work_too(client: TestClient) -> None:
    install(client, "golden", [DONE])
    assert chat(client, path="/chat/completions").status_code == 200
    assert client.get("/models").json()["data"][0]["id"] == "wt-model"


def test_models_are_listed(client: TestClient) -> None:
    listing = client.get("/v1/models").json()
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == ["wt-model", "other"]
    assert client.get("/v1/models/other").json()["id"] == "other"
    missing = client.get("/v1/models/nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        (b"{not json", None),
        (b"[1]", None),
        (json.dumps({"messages": MESSAGES}).encode(), "model"),
        (json.dumps({"model": "m", "messages": []}).encode(), "messages"),
        (json.dumps({"model": "m"}).encode(), "messages"),
    ],
)
def test_malformed_requests_are_refused_and_logged(client: TestClient, raw: bytes, param: str | None) -> None:
    install(client, "golden", [DONE])
    reply = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "invalid_request"
    assert reply.json()["error"]["param"] == param
    [entry] = log(client)
    assert entry["error_code"] == "invalid_request"
    assert client.get("/wt/script").json()["global"]["remaining"] == 1, "a refused request uses no decision"


def test_admin_script_validation_names_the_bad_field(client: TestClient) -> None:
    reply = client.put("/wt/script", json={"case": "c", "decisions": [{"content": 3}]})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "decisions[0].content"
    assert error["code"] == "invalid_script"
    assert "content must be a string or null" in error["message"]
    assert client.put("/wt/script", content=b"nope").json()["error"]["param"] == "body"
    assert client.get("/wt/script").json()["global"] is None


def test_admin_script_listing_and_clearing(client: TestClient) -> None:
    install(client, "g", [DONE, DONE])
    install(client, "a", [DONE], session="a")
    chat(client)
    listing = client.get("/wt/script").json()
    assert listing["mode"] == "script"
    assert listing["global"] == {"case": "g", "session": None, "total": 2, "served": 1, "remaining": 1}
    assert listing["sessions"]["a"]["remaining"] == 1
    assert client.delete("/wt/script", params={"session": "a"}).json() == {"cleared": 1}
    assert client.get("/wt/script").json()["sessions"] == {}
    assert client.delete("/wt/script").json() == {"cleared": 1}
    assert chat(client).json()["error"]["code"] == "no_script"


def test_admin_log_since_and_clear(client: TestClient) -> None:
    for _ in range(3):
        chat(client)
    assert [e["index"] for e in log(client, since=1)] == [1, 2]
    assert client.get("/wt/log", params={"since": "x"}).json()["error"]["param"] == "since"
    assert client.delete("/wt/log").json() == {"cleared": 3}
    chat(client)
    body = client.get("/wt/log").json()
    assert [e["index"] for e in body["entries"]] == [3]
    assert body["next"] == 4


def test_health(client: TestClient) -> None:
    health = client.get("/wt/health").json()
    assert health["status"] == "ok"
    assert health["mode"] == "script"
    assert health["models"] == ["wt-model", "other"]


def test_script_routes_answer_409_outside_script_mode() -> None:
    # The upstream is never contacted: only admin routes are called.
    app = create_app(LiveMode("http://127.0.0.1:9/v1"), models=["m"])
    with TestClient(app) as client:
        for method in ("GET", "PUT", "DELETE"):
            reply = client.request(method, "/wt/script", json={"case": "c", "decisions": [{"content": "x"}]})
            assert reply.status_code == 409
            assert reply.json()["error"]["code"] == "not_script_mode"
        assert client.get("/wt/health").json()["mode"] == "live"
        assert client.get("/wt/log").json()["entries"] == []


class BrokenMode:
    """A mode whose complete() raises: the gateway must still answer and log a refusal."""

    name = "broken"

    async def complete(self, request: ChatRequest) -> ModeReply:
        raise RuntimeError("disk on fire")

    async def aclose(self) -> None:
        return None


def test_a_mode_that_raises_gives_a_logged_500() -> None:
    with TestClient(create_app(BrokenMode(), models=["m"]), raise_server_exceptions=False) as client:
        reply = chat(client)
        assert reply.status_code == 500
        assert reply.json()["error"]["code"] == "mode_failed"
        assert "disk on fire" in reply.json()["error"]["message"]
        [entry] = log(client)
        assert entry["error_code"] == "mode_failed"


def test_unknown_routes_get_openai_errors(client: TestClient) -> None:
    reply = client.get("/v1/nothing")
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "not_found"
    assert client.get("/v1/chat/completions").status_code == 405
