"""The agent loop: model calls through the gateway, each tool call run once on its MCP server."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from typing import Any

from minimal_agent.mcp import McpServerLink

MAX_STEPS = 16
TIMEOUT_S = 300.0


class TurnError(Exception):
    """The turn could not finish (the model or a tool server failed); the message says why."""


class Agent:
    """Sessions of messages, the configuration from the environment, and one turn at a time per session."""

    def __init__(self, env: dict[str, str]) -> None:
        base = env.get("WT_MODEL_BASE_URL", "").rstrip("/")
        if not base:
            raise SystemExit("WT_MODEL_BASE_URL is not set: the model gateway's OpenAI-compatible base URL")
        self.url = f"{base}/chat/completions"
        self.model = env.get("WT_MODEL_NAME") or "wt-default"
        self.system = env.get("WT_SYSTEM_PROMPT") or "You are a helpful agent. Use the tools you are given."
        self.sampling = json.loads(env.get("WT_SAMPLING") or "{}")
        self.servers = [entry["url"] for entry in json.loads(env.get("WT_MCP_SERVERS") or "[]")]
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def reset(self) -> None:
        with self.lock:
            self.sessions.clear()

    def turn(self, session_id: str, text: str) -> dict[str, Any]:
        with self.lock:
            history = list(self.sessions.get(session_id, []))
        history.append({"role": "user", "content": text})
        reported: list[dict[str, Any]] = []
        links, tools = self._tools()
        for _ in range(MAX_STEPS):
            message = self._complete(history, tools, session_id)
            calls = message.get("tool_calls") or []
            history.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
                if calls
                else {"role": "assistant", "content": message.get("content") or ""}
            )
            if not calls:
                with self.lock:
                    self.sessions[session_id] = history
                return {"content": message.get("content") or "", "tool_calls": reported}
            for call in calls:
                name = call["function"]["name"]
                arguments = json.loads(call["function"].get("arguments") or "{}")
                reported.append({"name": name, "arguments": arguments})
                link = links.get(name)
                answer = link.call(name, arguments) if link else f"error: no tool named {name}"
                history.append({"role": "tool", "tool_call_id": call["id"], "content": answer})
        raise TurnError(f"no final answer within {MAX_STEPS} model calls")

    def _tools(self) -> tuple[dict[str, McpServerLink], list[dict[str, Any]]]:
        links: dict[str, McpServerLink] = {}
        offered: list[dict[str, Any]] = []
        for url in self.servers:
            link = McpServerLink(url)
            link.open()
            for tool in link.tools():
                links[tool["name"]] = link
                function = {
                    "name": tool["name"],
                    "description": tool.get("description") or "",
                    "parameters": tool.get("inputSchema") or {"type": "object"},
                }
                offered.append({"type": "function", "function": function})
        return links, offered

    def _complete(
        self, history: list[dict[str, Any]], tools: list[dict[str, Any]], session: str
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": self.system}, *history],
            **self.sampling,
        }
        if tools:
            body["tools"] = tools
        request = urllib.request.Request(  # noqa: S310 - the gateway's URL (WT_MODEL_BASE_URL)
            self.url,
            json.dumps(body).encode(),
            {"Content-Type": "application/json", "X-WT-Session": session},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise TurnError(f"the model gateway answered HTTP {exc.code}: {exc.read()[:500]!r}") from exc
        except OSError as exc:
            raise TurnError(f"the model gateway cannot be reached: {exc}") from exc
        return dict(answer["choices"][0]["message"])


def from_environment() -> Agent:
    return Agent(dict(os.environ))
