"""A Contract C endpoint on loopback whose /wt/inject answers the test queues, in order; it records each
request body. Real HTTP, for driving the http_inject runtime (and `wt run --runtime http_inject`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from windtunnel._net.server_thread import ServerThread


class Endpoint:
    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.requests: list[Any] = []

    async def _inject(self, request: Request) -> Response:
        self.requests.append(await request.json())
        if not self.answers:
            return JSONResponse({"error": "no answer queued"}, status_code=500)
        return JSONResponse(self.answers.pop(0))

    async def _reset(self, request: Request) -> Response:
        return JSONResponse({})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/wt/inject", self._inject, methods=["POST"]),
                Route("/wt/reset", self._reset, methods=["POST"]),
            ]
        )


@contextmanager
def serving(answers: list[dict[str, Any]]) -> Iterator[tuple[Endpoint, str]]:
    endpoint = Endpoint(answers)
    with ServerThread(endpoint.app()) as server:
        yield endpoint, server.url


MISSED_SECOND_CALL: dict[str, Any] = {
    "content": "done",
    "tool_calls": [],
    "usage": {
        "prompt_tokens": 4500,
        "cached_tokens": 1600,
        "completion_tokens": 90,
        "calls": [
            {"prompt_tokens": 1200, "cached_tokens": 0, "completion_tokens": 40},
            {"prompt_tokens": 1500, "cached_tokens": 100, "completion_tokens": 30},
            {"prompt_tokens": 1800, "cached_tokens": 1500, "completion_tokens": 20},
        ],
    },
}
"""One turn, three model calls; the second reads 100 of the 1200 tokens the first already sent from cache."""
