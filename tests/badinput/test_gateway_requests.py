"""Bad model calls to the real gateway (script mode) over real HTTP on loopback: wrong types and ranges
(400 naming the field), malformed and over-deep JSON (400, never a 500 RecursionError), bodies over the size
limit (413, declared or streamed). Well-formed calls pass the checks and reach the script (422 no_script):
the controls that show the checks refuse only what is wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from windtunnel._gateway.app import create_app
from windtunnel._gateway.script import ScriptMode
from windtunnel._net.server_thread import ServerThread

LIMIT = 64 * 1024
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def gateway() -> Iterator[httpx.Client]:
    app = create_app(ScriptMode(), models=["wt-model"], max_body_bytes=LIMIT)
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def call(**fields: Any) -> dict[str, Any]:
    return {"model": "wt-model", "messages": MESSAGES, **fields}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# (id, body: a dict sent as JSON or raw bytes, the field the 400 names or None, text of the message)
BAD_FIELDS: list[tuple[str, dict[str, Any] | bytes, str | None, str]] = [
    (
        "temperature word",
        call(temperature="hot"),
        "temperature",
        "temperature must be a number between 0 and 2, got the string 'hot'",
    ),
    ("temperature bool", call(temperature=True), "temperature", "got the boolean true"),
    ("temperature too high", call(temperature=3), "temperature", "between 0 and 2, got the number 3"),
    ("temperature negative", call(temperature=-0.1), "temperature", "between 0 and 2"),
    (
        "temperature nan",
        b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": NaN}',
        "temperature",
        "got the number nan",
    ),
    (
        "temperature infinity",
        b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": Infinity}',
        "temperature",
        "between 0 and 2",
    ),
    ("temperature list", call(temperature=[1]), "temperature", "got a JSON array"),
    ("top_p too high", call(top_p=1.5), "top_p", "top_p must be a number between 0 and 1"),
    ("top_p word", call(top_p="all"), "top_p", "top_p must be a number"),
    ("presence penalty", call(presence_penalty=5), "presence_penalty", "between -2 and 2"),
    ("frequency penalty", call(frequency_penalty="lots"), "frequency_penalty", "between -2 and 2"),
    ("max_tokens zero", call(max_tokens=0), "max_tokens", "max_tokens must be a whole number of at least 1"),
    ("max_tokens float", call(max_tokens=10.5), "max_tokens", "got the number 10.5"),
    ("max_tokens word", call(max_tokens="10"), "max_tokens", "got the string '10'"),
    ("max_completion_tokens", call(max_completion_tokens=-1), "max_completion_tokens", "at least 1"),
    ("n zero", call(n=0), "n", "n must be a whole number from 1 to 128"),
    ("n huge", call(n=10_000), "n", "from 1 to 128"),
    ("seed word", call(seed="lucky"), "seed", "seed must be a whole number"),
    ("seed float", call(seed=1.5), "seed", "seed must be a whole number"),
    ("top_logprobs", call(top_logprobs=99), "top_logprobs", "from 0 to 20"),
    ("stream word", call(stream="yes"), "stream", "stream must be true or false"),
    ("stream number", call(stream=1), "stream", "stream must be true or false, got the number 1"),
    ("logprobs word", call(logprobs="no"), "logprobs", "true or false"),
    ("parallel_tool_calls", call(parallel_tool_calls="on"), "parallel_tool_calls", "true or false"),
    ("store", call(store=0), "store", "true or false"),
    ("stream_options list", call(stream_options=[]), "stream_options", "stream_options must be an object"),
    ("response_format word", call(response_format="json"), "response_format", "must be an object"),
    ("metadata list", call(metadata=["a"]), "metadata", "must be an object"),
    ("logit_bias number", call(logit_bias=1), "logit_bias", "must be an object"),
    ("user number", call(user=42), "user", "user must be a string"),
    ("tools word", call(tools="all"), "tools", "tools must be an array"),
    ("tools numbers", call(tools=[5]), "tools", "tools must be an array"),
    ("tool without function", call(tools=[{"type": "function"}]), "tools", "tools must be an array"),
    (
        "tool without name",
        call(tools=[{"type": "function", "function": {}}]),
        "tools",
        "tools must be an array",
    ),
    ("tool_choice word", call(tool_choice="sometimes"), "tool_choice", "tool_choice must be"),
    ("tool_choice number", call(tool_choice=1), "tool_choice", "tool_choice must be"),
    ("stop number", call(stop=5), "stop", "stop must be a string or an array of strings"),
    ("stop mixed", call(stop=["a", 1]), "stop", "stop must be a string or an array of strings"),
    (
        "messages number",
        call(messages=5),
        "messages",
        "messages must be a non-empty array of message objects, got the number 5",
    ),
    ("messages empty", call(messages=[]), "messages", "messages must be a non-empty array"),
    ("messages string", call(messages="hi"), "messages", "got the string 'hi'"),
    ("messages null", call(messages=None), "messages", "got null"),
    (
        "message a number",
        call(messages=[5]),
        "messages[0]",
        "messages[0] must be a message object, got the number 5",
    ),
    (
        "message without role",
        call(messages=[{"content": "x"}]),
        "messages[0].role",
        "messages[0].role must be one of",
    ),
    (
        "message role robot",
        call(messages=[{"role": "robot", "content": "x"}]),
        "messages[0].role",
        "got the string 'robot'",
    ),
    (
        "message role number",
        call(messages=[{"role": 1, "content": "x"}]),
        "messages[0].role",
        "got the number 1",
    ),
    (
        "message content number",
        call(messages=[{"role": "user", "content": 5}]),
        "messages[0].content",
        "must be a string, an array of parts or null",
    ),
    (
        "message content object",
        call(messages=[{"role": "user", "content": {"a": 1}}]),
        "messages[0].content",
        "got a JSON object",
    ),
    (
        "second message bad",
        call(messages=[*MESSAGES, {"role": "assistant", "content": 3}]),
        "messages[1].content",
        "messages[1].content",
    ),
    (
        "tool_calls word",
        call(messages=[{"role": "assistant", "content": None, "tool_calls": "x"}]),
        "messages[0].tool_calls",
        "must be an array of tool call objects",
    ),
    (
        "tool_calls numbers",
        call(messages=[{"role": "assistant", "content": None, "tool_calls": [1]}]),
        "messages[0].tool_calls",
        "tool call objects",
    ),
    ("model missing", {"messages": MESSAGES}, "model", "you must provide a model parameter"),
    ("model number", call(model=5), "model", "you must provide a model parameter"),
    ("model empty", call(model=""), "model", "you must provide a model parameter"),
    ("not json", b"{model: m}", None, "the request body is not JSON"),
    ("empty body", b"", None, "the request body is not JSON"),
    ("not utf-8", b'{"model": "\xff"}', None, "the request body is not JSON"),
    ("an array", b"[1, 2]", None, "the request body must be a JSON object, got a JSON array"),
    ("a string", b'"hello"', None, "the request body must be a JSON object, got the string 'hello'"),
    ("null", b"null", None, "the request body must be a JSON object, got null"),
    ("nested 65", nested(65).encode(), None, "the request body nests deeper than 64 levels"),
    ("nested 1000", nested(1000).encode(), None, "nests deeper than 64 levels"),
    ("nested 30000", nested(30_000).encode(), None, "nests deeper than 64 levels"),
    (
        "deep inside a field",
        json.dumps(call(metadata={"a": json.loads(nested(70))})).encode(),
        None,
        "nests deeper than 64 levels",
    ),
    ("deep objects", ('{"a":' * 5000 + "1" + "}" * 5000).encode(), None, "nests deeper than 64 levels"),
]

# Well-formed: they pass every check and reach the script, which has none installed (422 no_script).
GOOD: list[tuple[str, dict[str, Any]]] = [
    ("plain", call()),
    ("nulls are defaults", call(temperature=None, top_p=None, max_tokens=None, stop=None, tools=None)),
    ("edges of ranges", call(temperature=0, top_p=1, presence_penalty=-2, frequency_penalty=2, n=1)),
    ("every type right", call(temperature=1.5, max_tokens=100, seed=7, stream=False, user="u", stop=["x"])),
    ("tools and choice", call(tools=[{"type": "function", "function": {"name": "f"}}], tool_choice="auto")),
    ("content parts", call(messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}])),
    (
        "assistant tool calls",
        call(messages=[*MESSAGES, {"role": "assistant", "content": None, "tool_calls": []}]),
    ),
    ("unknown fields pass", call(reasoning_effort="low", extra_body={"x": 1})),
    ("nested 60", call(metadata={"a": json.loads(nested(58))})),
]


@pytest.mark.parametrize(("name", "body", "param", "text"), BAD_FIELDS, ids=[b[0] for b in BAD_FIELDS])
def test_a_bad_request_is_a_400_naming_the_field(
    gateway: httpx.Client, name: str, body: dict[str, Any] | bytes, param: str | None, text: str
) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = gateway.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["param"] == param
    assert text in error["message"] and "\n" not in error["message"], error["message"]


@pytest.mark.parametrize(("name", "body"), GOOD, ids=[g[0] for g in GOOD])
def test_a_well_formed_request_passes_the_checks(
    gateway: httpx.Client, name: str, body: dict[str, Any]
) -> None:
    response = gateway.post("/v1/chat/completions", json=body)
    assert response.status_code == 422 and response.json()["error"]["code"] == "no_script", response.text


def test_a_declared_body_over_the_limit_is_413_before_it_is_read(gateway: httpx.Client) -> None:
    body = json.dumps(call(messages=[{"role": "user", "content": "x" * LIMIT}])).encode()
    response = gateway.post(
        "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "body_too_large" and f"declares {len(body)} bytes" in error["message"]
    assert f"limit of {LIMIT} bytes (WT_MAX_BODY_BYTES)" in error["message"]


def test_a_streamed_body_over_the_limit_is_413_once_it_passes_it(gateway: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "m", "messages": [{"role": "user", "content": "'
        for _ in range(LIMIT // 1024 + 8):
            yield b"x" * 1024
        yield b'"}]}'

    response = gateway.post("/v1/chat/completions", content=chunks())  # chunked: no Content-Length
    assert response.status_code == 413
    assert f"ran past {LIMIT} bytes" in response.json()["error"]["message"]


def test_a_body_just_under_the_limit_is_read(gateway: httpx.Client) -> None:
    body = call(messages=[{"role": "user", "content": "x" * (LIMIT - 200)}])
    assert gateway.post("/v1/chat/completions", json=body).status_code == 422


def test_the_gateway_serves_after_every_bad_request(gateway: httpx.Client) -> None:
    assert gateway.get("/wt/health").status_code == 200
