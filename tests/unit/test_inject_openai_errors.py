"""windtunnel_inject.openai_errors: the openai client's failures against a real HTTP server, as one line."""

from __future__ import annotations

import anyio
import openai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from windtunnel_inject import TurnFailed
from windtunnel_inject.openai_errors import describe_model_failure

from windtunnel._net.server_thread import ServerThread


async def _refuse(_request: Request) -> JSONResponse:
    error = {
        "message": "script exhausted: case 'short'",
        "type": "invalid_request",
        "code": "script_exhausted",
    }
    return JSONResponse({"error": error}, status_code=422)


def _call(base_url: str) -> BaseException:
    async def call() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="wt-gateway", max_retries=0, timeout=5)
        try:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        finally:
            await client.close()

    try:
        anyio.run(call)
    except Exception as exc:
        return exc
    raise AssertionError("the call did not fail")


def test_a_refusal_names_the_url_the_status_the_gateways_message_and_code() -> None:
    with ServerThread(Starlette(routes=[Route("/v1/chat/completions", _refuse, methods=["POST"])])) as server:
        failure = _call(f"{server.url}/v1")
    wrapped = ExceptionGroup("task group", [RuntimeError("the SDK's own wrapper")])
    wrapped.__context__ = failure
    assert describe_model_failure(wrapped) == (
        f"model call to {server.url}/v1/chat/completions answered HTTP 422: "
        "script exhausted: case 'short' (code script_exhausted)"
    )


def test_an_unreachable_model_names_the_url() -> None:
    with ServerThread(Starlette()) as server:
        url = server.url
    text = describe_model_failure(_call(f"{url}/v1"))
    assert text.startswith(f"model call to {url}/v1/chat/completions failed: APIConnectionError: ")


def test_other_failures_are_described_as_they_are() -> None:
    assert describe_model_failure(TurnFailed("no tools")) == "TurnFailed: no tools"
