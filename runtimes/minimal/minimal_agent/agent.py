"""The agent loop: model calls through the gateway in the wire WT_MODEL_WIRE names, each tool call run once on
its MCP server."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from typing import Any

from minimal_agent.mcp import McpServerLink
from minimal_agent.wires import wire_for

MAX_STEPS = 16
TIMEOUT_S = 300.0


class TurnError(Exception):
    """The turn could not finish (the model or a tool server failed); the message says why."""


FAULTS = ("normalize_tool_arguments", "stale_session_header")
"""WT_FAULT's values: known-broken variants the conformance suite must catch (unset: correct)."""


class Agent:
    """Sessions of the wire's history items, the configuration from the environment, and one turn at a time
    per session. WT_MODEL_WIRE picks the model API (minimal_agent.wires); the loop is the same for each."""

    def __init__(self, env: dict[str, str]) -> None:
        self.wire = wire_for(env)
        self.url = self.wire.url(env)
        self.model = env.get("WT_MODEL_NAME") or "wt-default"
        self.system = env.get("WT_SYSTEM_PROMPT") or "You are a helpful agent. Use the tools you are given."
        self.sampling = json.loads(env.get("WT_SAMPLING") or "{}")
        self.servers = [entry["url"] for entry in json.loads(env.get("WT_MCP_SERVERS") or "[]")]
        self.fault = env.get("WT_FAULT") or ""
        if self.fault and self.fault not in FAULTS:
            raise SystemExit(
                f"WT_FAULT={self.fault!r} is not a known fault: {', '.join(FAULTS)} (unset = correct)"
            )
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.first_session: str | None = None  # fault stale_session_header: the session it keeps sending

    def reset(self) -> None:
        with self.lock:
            self.sessions.clear()

    def turn(self, session_id: str, text: str) -> dict[str, Any]:
        with self.lock:
            history = list(self.sessions.get(session_id, []))
        history.append({"role": "user", "content": text})
        reported: list[dict[str, Any]] = []
        links, tools = self._tools(self._header(session_id))
        for _ in range(MAX_STEPS):
            step = self.wire.read(self._complete(history, tools, self._header(session_id)))
            history += step.items
            if not step.calls:
                with self.lock:
                    self.sessions[session_id] = history
                return {"content": step.content, "tool_calls": reported}
            answered = []
            for call in step.calls:
                reported.append({"name": call.name, "arguments": self._reported(call.arguments)})
                link = links.get(call.name)
                answer = link.call(call.name, call.arguments) if link else f"error: no tool named {call.name}"
                answered.append((call, answer))
            history += self.wire.results(answered)
        raise TurnError(f"no final answer within {MAX_STEPS} model calls")

    def _header(self, session_id: str) -> str:
        """The X-WT-Session to send for a turn of `session_id` (a poison keeps sending the first one)."""
        if self.fault != "stale_session_header":
            return session_id
        with self.lock:
            self.first_session = self.first_session or session_id
            return self.first_session

    def _reported(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments as the model emitted them (a poison sorts their keys: a rewrite the suite catches)."""
        if self.fault == "normalize_tool_arguments":
            return json.loads(json.dumps(arguments, sort_keys=True))  # type: ignore[no-any-return]
        return arguments

    def _tools(self, session: str) -> tuple[dict[str, McpServerLink], list[dict[str, Any]]]:
        links: dict[str, McpServerLink] = {}
        offered: list[dict[str, Any]] = []
        for url in self.servers:
            link = McpServerLink(url, session)
            link.open()
            for tool in link.tools():
                links[tool["name"]] = link
                schema = tool.get("inputSchema") or {"type": "object"}
                offered.append(self.wire.tool(tool["name"], tool.get("description") or "", schema))
        return links, offered

    def _complete(
        self, history: list[dict[str, Any]], tools: list[dict[str, Any]], session: str
    ) -> dict[str, Any]:
        body = self.wire.body(self.model, self.system, history, tools, self.sampling)
        request = urllib.request.Request(  # noqa: S310 - the gateway's URL (WT_MODEL_BASE_URL / ROOT_URL)
            self.url,
            json.dumps(body).encode(),
            {"Content-Type": "application/json", "X-WT-Session": session},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                answer: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise TurnError(f"the model gateway answered HTTP {exc.code}: {exc.read()[:500]!r}") from exc
        except OSError as exc:
            raise TurnError(f"the model gateway cannot be reached: {exc}") from exc
        return answer


def from_environment() -> Agent:
    return Agent(dict(os.environ))
