"""Contract C's two required routes over http.server: POST /wt/inject and POST /wt/reset, nothing else."""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from minimal_agent.agent import Agent, TurnError, from_environment
from minimal_agent.mcp import McpFailure

ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - inside its container the harness reaches it over the network


class Handler(BaseHTTPRequestHandler):
    agent: Agent

    def do_POST(self) -> None:
        if self.path == "/wt/reset":
            self.agent.reset()
            self._answer(200, {})
        elif self.path == "/wt/inject":
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            try:
                answer = self.agent.turn(str(body["session_id"]), str(body["message"]["content"]))
            except (TurnError, McpFailure) as exc:
                self._answer(500, {"error": str(exc)})
                return
            self._answer(200, answer)
        else:
            self._answer(404, {"error": f"no route {self.path}"})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the harness keeps its own evidence."""


def make_server(agent: Agent, host: str, port: int) -> ThreadingHTTPServer:
    """A server of the two routes for `agent` (port 0: any free port)."""
    handler = type("AgentHandler", (Handler,), {"agent": agent})
    return ThreadingHTTPServer((host, port), handler)


def main() -> None:
    port = int(os.environ.get("WT_INJECT_PORT") or 8647)
    make_server(from_environment(), ALL_INTERFACES, port).serve_forever()
