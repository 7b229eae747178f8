"""Bad Contract C answers, read by the runner's real handle (HttpInjectHandle) from a real HTTP server on
loopback: envelopes with missing, extra or wrongly typed fields, bodies that are no JSON or nest too deep,
error statuses, answers over the size limit, and an answer trickled slower than its deadline. Each is the
named error (EnvelopeError with its field, RuntimeFault, RuntimeTimeoutError) with a one-line message."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from windtunnel._drivers.http_inject import HttpInjectHandle
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import EnvelopeError, RuntimeFault, RuntimeTimeoutError, WindTunnelError

LIMIT = 32 * 1024


@dataclass
class Endpoint:
    """What the next POST /wt/inject answers: a status and raw bytes, optionally trickled."""

    status: int = 200
    body: bytes = b"{}"
    trickle_s: float = 0.0
    seen: list[dict[str, Any]] = field(default_factory=list)

    async def inject(self, request: Request) -> Response:
        self.seen.append(await request.json())
        if self.trickle_s:
            return StreamingResponse(self._trickled(), status_code=self.status, media_type="application/json")
        return Response(self.body, status_code=self.status, media_type="application/json")

    async def _trickled(self) -> AsyncIterator[bytes]:
        for byte in self.body:
            yield bytes([byte])
            await asyncio.sleep(self.trickle_s)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[Endpoint, str]]:
    state = Endpoint()
    app = Starlette(routes=[Route("/wt/inject", state.inject, methods=["POST"])])
    with ServerThread(app) as server:
        yield state, server.url


def envelope(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


CALL = {"name": "lookup_order", "arguments": {"order_id": "A-1"}}

# (id, status, body, error class, field or None, text of the message)
CASES: list[tuple[str, int, bytes, type[WindTunnelError], str | None, str]] = [
    ("body an array", 200, b"[]", EnvelopeError, "<body>", "the response body is a list, not an object"),
    ("body a string", 200, b'"hello"', EnvelopeError, "<body>", "the response body is a str"),
    ("body a number", 200, b"42", EnvelopeError, "<body>", "the response body is a int"),
    ("body null", 200, b"null", EnvelopeError, "<body>", "the response body is a NoneType"),
    (
        "body not json",
        200,
        b"<html>oops</html>",
        EnvelopeError,
        "<body>",
        "answered non-JSON: '<html>oops</html>'",
    ),
    ("body empty", 200, b"", EnvelopeError, "<body>", "answered non-JSON"),
    ("body not utf-8", 200, b'{"content": "\xff"}', EnvelopeError, "<body>", "answered non-JSON"),
    ("body truncated", 200, b'{"content": "hel', EnvelopeError, "<body>", "answered non-JSON"),
    (
        "body nested deep",
        200,
        b"[" * 100_00 + b"]" * 100_00,
        EnvelopeError,
        "<body>",
        "nested too deeply to read",
    ),
    (
        "extra field",
        200,
        envelope(content="", tool_calls=[], thoughts="x"),
        EnvelopeError,
        "thoughts",
        "unknown field 'thoughts'",
    ),
    ("openai shape", 200, envelope(choices=[]), EnvelopeError, "choices", "unknown field 'choices'"),
    (
        "content missing",
        200,
        envelope(tool_calls=[]),
        EnvelopeError,
        "content",
        "content is NoneType, expected a string",
    ),
    (
        "content null",
        200,
        envelope(content=None, tool_calls=[]),
        EnvelopeError,
        "content",
        "expected a string",
    ),
    ("content number", 200, envelope(content=5, tool_calls=[]), EnvelopeError, "content", "content is int"),
    (
        "content list",
        200,
        envelope(content=["a"], tool_calls=[]),
        EnvelopeError,
        "content",
        "content is list",
    ),
    (
        "content object",
        200,
        envelope(content={"text": "a"}, tool_calls=[]),
        EnvelopeError,
        "content",
        "content is dict",
    ),
    ("tool_calls missing", 200, envelope(content="hi"), EnvelopeError, "tool_calls", "tool_calls is missing"),
    (
        "tool_calls null",
        200,
        envelope(content="hi", tool_calls=None),
        EnvelopeError,
        "tool_calls",
        "tool_calls is NoneType",
    ),
    (
        "tool_calls object",
        200,
        envelope(content="hi", tool_calls={}),
        EnvelopeError,
        "tool_calls",
        "tool_calls is dict",
    ),
    (
        "tool_calls string",
        200,
        envelope(content="hi", tool_calls="lookup"),
        EnvelopeError,
        "tool_calls",
        "tool_calls is str",
    ),
    (
        "call a string",
        200,
        envelope(content="", tool_calls=["lookup"]),
        EnvelopeError,
        "tool_calls[0]",
        "tool_calls[0] is a str",
    ),
    (
        "call openai shape",
        200,
        envelope(content="", tool_calls=[{"id": "c", "function": {}}]),
        EnvelopeError,
        "tool_calls[0].arguments",
        "expected exactly name and arguments",
    ),
    (
        "call extra id",
        200,
        envelope(content="", tool_calls=[{**CALL, "id": "c1"}]),
        EnvelopeError,
        "tool_calls[0].id",
        "expected exactly name and arguments",
    ),
    (
        "call without arguments",
        200,
        envelope(content="", tool_calls=[{"name": "x"}]),
        EnvelopeError,
        "tool_calls[0].arguments",
        "expected exactly",
    ),
    (
        "call name empty",
        200,
        envelope(content="", tool_calls=[{"name": "", "arguments": {}}]),
        EnvelopeError,
        "tool_calls[0].name",
        "tool_calls[0].name is ''",
    ),
    (
        "call name number",
        200,
        envelope(content="", tool_calls=[{"name": 3, "arguments": {}}]),
        EnvelopeError,
        "tool_calls[0].name",
        "tool_calls[0].name is 3",
    ),
    (
        "arguments a string",
        200,
        envelope(content="", tool_calls=[{"name": "x", "arguments": "{}"}]),
        EnvelopeError,
        "tool_calls[0].arguments",
        "is str, expected an object",
    ),
    (
        "arguments a list",
        200,
        envelope(content="", tool_calls=[{"name": "x", "arguments": []}]),
        EnvelopeError,
        "tool_calls[0].arguments",
        "is list",
    ),
    (
        "second call bad",
        200,
        envelope(content="", tool_calls=[CALL, {"name": "y", "arguments": 1}]),
        EnvelopeError,
        "tool_calls[1].arguments",
        "tool_calls[1].arguments is int",
    ),
    (
        "usage a number",
        200,
        envelope(content="", tool_calls=[], usage=10),
        EnvelopeError,
        "usage",
        "usage is int, expected an object",
    ),
    (
        "usage a list",
        200,
        envelope(content="", tool_calls=[], usage=[]),
        EnvelopeError,
        "usage",
        "usage is list",
    ),
    (
        "usage negative tokens",
        200,
        envelope(content="", tool_calls=[], usage={"prompt_tokens": -5, "completion_tokens": 3}),
        EnvelopeError,
        "usage.prompt_tokens",
        "usage.prompt_tokens is -5, expected a token count (a whole number, 0 or more)",
    ),
    (
        "usage tokens as text",
        200,
        envelope(content="", tool_calls=[], usage={"prompt_tokens": 5, "completion_tokens": "many"}),
        EnvelopeError,
        "usage.completion_tokens",
        'usage.completion_tokens is "many", expected a token count',
    ),
    (
        "usage tokens fractional",
        200,
        envelope(content="", tool_calls=[], usage={"total_tokens": 1.5}),
        EnvelopeError,
        "usage.total_tokens",
        "usage.total_tokens is 1.5, expected a token count",
    ),
    (
        "usage call tokens negative",
        200,
        envelope(content="", tool_calls=[], usage={"calls": [{"input_tokens": 1}, {"output_tokens": -1}]}),
        EnvelopeError,
        "usage.calls[1].output_tokens",
        "usage.calls[1].output_tokens is -1",
    ),
    (
        "usage calls not a list",
        200,
        envelope(content="", tool_calls=[], usage={"calls": 3}),
        EnvelopeError,
        "usage.calls",
        "usage.calls is not a list of objects",
    ),
    (
        "status 500",
        500,
        b'{"error": {"message": "boom"}}',
        RuntimeFault,
        None,
        "/wt/inject answered 500: boom",
    ),
    (
        "status 500 multi-line text",
        500,
        b"Traceback (most recent call last):\n  File x\nKeyError",
        RuntimeFault,
        None,
        "answered 500: Traceback (most recent call last): File x KeyError",
    ),
    ("status 404", 404, b"", RuntimeFault, None, "/wt/inject answered 404: <empty body>"),
    ("status 201", 201, envelope(content="", tool_calls=[]), RuntimeFault, None, "/wt/inject answered 201"),
    ("status 302", 302, b"", RuntimeFault, None, "/wt/inject answered 302"),
    (
        "over the limit",
        200,
        envelope(content="x" * (LIMIT + 10), tool_calls=[]),
        EnvelopeError,
        "<body>",
        f"answered more than {LIMIT} bytes",
    ),
]


def handle(url: str, timeout_s: float = 10.0) -> HttpInjectHandle:
    return HttpInjectHandle(url, timeout_s, runtime="corpus", max_body_bytes=LIMIT)


@pytest.mark.parametrize(
    ("name", "status", "body", "kind", "where", "text"), CASES, ids=[c[0] for c in CASES]
)
def test_a_bad_answer_is_a_named_one_line_error(
    endpoint: tuple[Endpoint, str],
    name: str,
    status: int,
    body: bytes,
    kind: type[WindTunnelError],
    where: str | None,
    text: str,
) -> None:
    state, url = endpoint
    state.status, state.body, state.trickle_s = status, body, 0.0
    client = handle(url)
    try:
        with pytest.raises(kind) as raised:
            client.send([{"role": "user", "content": "hi"}], "s1")
    finally:
        client.teardown()
    error = raised.value
    assert text in error.message and "\n" not in error.message, error.message
    assert getattr(error, "field", None) == where
    assert error.hint and "\n" not in error.hint


def test_a_good_answer_is_read(endpoint: tuple[Endpoint, str]) -> None:
    """The control: the same endpoint with a valid envelope passes, tool calls in order."""
    state, url = endpoint
    state.status, state.body, state.trickle_s = 200, envelope(content="done", tool_calls=[CALL]), 0.0
    client = handle(url)
    try:
        answer = client.send([{"role": "user", "content": "hi"}], "s1")
    finally:
        client.teardown()
    message = answer["choices"][0]["message"]
    assert message["content"] == "done" and message["tool_calls"][0]["function"]["name"] == "lookup_order"


def test_an_answer_just_under_the_limit_is_read(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.status, state.body, state.trickle_s = 200, envelope(content="x" * (LIMIT - 100), tool_calls=[]), 0.0
    client = handle(url)
    try:
        assert (
            len(client.send([{"role": "user", "content": "hi"}], "s1")["choices"][0]["message"]["content"])
            > 0
        )
    finally:
        client.teardown()


def test_a_trickled_answer_cannot_hold_the_deadline(endpoint: tuple[Endpoint, str]) -> None:
    """Byte by byte, each within any per-read timeout: the whole-answer deadline (timeout_s plus the
    transport grace) ends it, instead of the minutes the trickle would take."""
    state, url = endpoint
    state.status, state.body, state.trickle_s = 200, envelope(content="x" * 400, tool_calls=[]), 0.1
    client = handle(url, timeout_s=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(RuntimeTimeoutError) as raised:
            client.send([{"role": "user", "content": "hi"}], "s1")
    finally:
        client.teardown()
    assert time.monotonic() - started < 8.0  # 0.5 s + 5 s grace, not the ~42 s of the trickle
    assert "no whole answer from" in raised.value.message and "\n" not in raised.value.message
