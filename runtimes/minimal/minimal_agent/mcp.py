"""A small MCP client over streamable HTTP: initialize, list the tools, call one; JSON or SSE answers."""

from __future__ import annotations

import http.client
import itertools
import json
import threading
import urllib.error
import urllib.request
from typing import Any

PROTOCOL = "2025-06-18"
TIMEOUT_S = 300.0


class McpFailure(Exception):
    """The server could not be reached or answered something that is not MCP."""


class McpServerLink:
    """One MCP server: a session opened on first use, its tools, and tools/call. `wt_session` is the Wind
    Tunnel session of the turn it serves, sent as X-WT-Session (optional in Contract C: the mocks record it)."""

    def __init__(self, url: str, wt_session: str | None = None, forms: str = "refuse") -> None:
        self.url = url
        self.wt_session = wt_session
        self.forms = forms
        """How a server's elicitation form is answered: "refuse", "accept" (each field's default, else the
        most cautious value of its type), or "accept_without_defaults" (a poison: only the required fields)."""
        self._session: str | None = None
        self._next_id = 0
        self.capabilities: dict[str, Any] = {}

    def open(self) -> None:
        answer = self._rpc(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                # A client that answers forms says so; servers send elicitation requests only to such clients.
                "capabilities": {} if self.forms == "refuse" else {"elicitation": {}},
                "clientInfo": {"name": "wt-minimal", "version": "1"},
            },
        )
        self.capabilities = answer.get("capabilities") or {}
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if self.forms != "refuse" and self._session:
            # A server may ask outside any call's answer, on the session's own stream (GET): a client that
            # answers forms listens there too, for as long as the server keeps it open.
            threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": PROTOCOL}
        headers["Mcp-Session-Id"] = self._session or ""
        request = urllib.request.Request(self.url, None, headers, method="GET")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                self._events(response)
        except (OSError, http.client.HTTPException, McpFailure, ValueError):
            return  # no stream offered (405), or it ended: nothing more will be asked there

    def resources(self) -> list[tuple[str, str]]:
        """(URI, text) of every text resource the server lists, each read with resources/read; none for a
        server that announces no resources."""
        if "resources" not in self.capabilities:
            return []
        found: list[tuple[str, str]] = []
        cursor: str | None = None
        while True:
            page = self._rpc("resources/list", {"cursor": cursor} if cursor else {})
            for listed in page.get("resources") or []:
                uri = listed.get("uri") if isinstance(listed, dict) else None
                if isinstance(uri, str):
                    contents = self._rpc("resources/read", {"uri": uri}).get("contents") or []
                    found += [
                        (uri, c["text"])
                        for c in contents
                        if isinstance(c, dict) and isinstance(c.get("text"), str)
                    ]
            cursor = page.get("nextCursor")
            if not cursor:
                return found

    def tools(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = self._rpc("tools/list", {"cursor": cursor} if cursor else {})
            found += [tool for tool in page.get("tools") or [] if isinstance(tool, dict)]
            cursor = page.get("nextCursor")
            if not cursor:
                return found

    def call(self, name: str, arguments: Any) -> tuple[list[dict[str, Any]], bool]:
        """The tool's answer, its MCP content parts as served, and whether it is an error answer (isError,
        or a JSON-RPC error as one text part)."""
        try:
            result = self._rpc("tools/call", {"name": name, "arguments": arguments})
        except RpcError as error:
            return [{"type": "text", "text": f"error {error.code}: {error.message}"}], True
        parts = [part for part in result.get("content") or [] if isinstance(part, dict)]
        return parts, bool(result.get("isError"))

    def _rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        answer = self._post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        for message in answer:
            if message.get("id") != request_id:
                continue
            if "error" in message:
                error = message["error"] or {}
                raise RpcError(int(error.get("code", 0)), str(error.get("message", "")))
            result = message.get("result")
            return result if isinstance(result, dict) else {}
        raise McpFailure(f"{self.url} gave no answer to {method}")

    def _post(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self._session:
            headers["Mcp-Session-Id"] = self._session
        if self.wt_session:
            headers["X-WT-Session"] = self.wt_session
        # The harness's URL (WT_MCP_SERVERS): http only.
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                self._session = response.headers.get("Mcp-Session-Id") or self._session
                if response.headers.get("Content-Type", "").startswith("text/event-stream"):
                    return self._events(response)
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            raise McpFailure(f"{self.url} answered HTTP {exc.code}: {exc.read()[:300]!r}") from exc
        except (OSError, http.client.HTTPException) as exc:  # refused, or dropped mid-answer
            raise McpFailure(f"{self.url} cannot be reached: {exc!r}") from exc
        if not text.strip():
            return []
        answer = json.loads(text)
        return answer if isinstance(answer, list) else [answer]

    def _events(self, response: Any) -> list[dict[str, Any]]:
        """The JSON messages of an SSE answer, read as they arrive (each event's data lines joined). A request
        the server sends during the call (elicitation, sampling) is answered at once (_answer): a server
        waiting for an answer would hold the call until its own deadline."""
        messages: list[dict[str, Any]] = []
        data: list[str] = []
        for raw in itertools.chain(response, [b""]):  # lazily: a line is handled when it arrives
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                message = json.loads("\n".join(data))
                data = []
                if isinstance(message, dict) and "method" in message and "id" in message:
                    self._answer(message)
                elif isinstance(message, dict):
                    messages.append(message)
        return messages

    def _answer(self, request: dict[str, Any]) -> None:
        """A server's request during a call: a form accepted when this client accepts forms, anything else
        refused with a JSON-RPC error (sampling: it makes model calls for its own turn only)."""
        if request["method"] == "elicitation/create" and self.forms != "refuse":
            schema = (request.get("params") or {}).get("requestedSchema") or {}
            content = _filled(schema, use_defaults=self.forms == "accept")
            self._post(
                {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": content}}
            )
            return
        error = {"code": -32601, "message": f"{request['method']} is not supported by this client"}
        self._post({"jsonrpc": "2.0", "id": request["id"], "error": error})


def _filled(schema: dict[str, Any], *, use_defaults: bool) -> dict[str, Any]:
    """A form's answer: each field's default, else the most cautious value of its type (false, 0, "", the
    first choice): an unattended client never agrees to more than the form itself proposes. Without
    defaults (a poison), only the required fields are answered: the others, defaults and all, are left out."""
    cautious = {"boolean": False, "integer": 0, "number": 0, "string": ""}
    required = set(schema.get("required") or [])
    content: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        if not isinstance(field, dict) or (not use_defaults and name not in required):
            continue
        if use_defaults and "default" in field:
            content[name] = field["default"]
        elif field.get("enum"):
            content[name] = field["enum"][0]
        else:
            content[name] = cautious.get(str(field.get("type")), "")
    return content


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
