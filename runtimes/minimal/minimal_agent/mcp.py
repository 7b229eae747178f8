"""A small MCP client over streamable HTTP: initialize, list the tools, call one; JSON or SSE answers."""

from __future__ import annotations

import dataclasses
import http.client
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

PROTOCOL = "2025-06-18"
TIMEOUT_S = 300.0
RETRY_MS = 1000
"""How long to wait before resuming a closed stream whose server named no `retry:`."""
RESUMES = 5
"""How many times one call's answer is looked for on a resumed stream before the call fails."""


@dataclasses.dataclass
class Stream:
    """What one SSE answer carried: its JSON messages, and how to resume it (the last event id, the
    server's retry delay) when it closed before the answer."""

    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    last_event_id: str | None = None
    retry_ms: int = RETRY_MS


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
            return  # no stream offered (405), or it ended, or the session was closed: nothing more to answer

    def close(self) -> None:
        """End the session (DELETE, as MCP asks of a client done with one): the server closes its streams,
        the GET listener among them. A server without sessions, or that refuses DELETE, has nothing to end."""
        if not self._session:
            return
        headers = {"Mcp-Session-Id": self._session, "MCP-Protocol-Version": PROTOCOL}
        request = urllib.request.Request(self.url, None, headers, method="DELETE")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=10):  # noqa: S310
                pass
        except (OSError, http.client.HTTPException):
            pass  # 405 or gone: the session ends with the server
        self._session = None

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
        stream = self._post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        for _ in range(RESUMES + 1):
            for message in stream.messages:
                if message.get("id") != request_id:
                    continue
                if "error" in message:
                    error = message["error"] or {}
                    raise RpcError(int(error.get("code", 0)), str(error.get("message", "")))
                result = message.get("result")
                return result if isinstance(result, dict) else {}
            if stream.last_event_id is None:
                break  # not a resumable stream: the answer is not coming
            stream = self._resume(stream, request_id)
        raise McpFailure(f"{self.url} gave no answer to {method}")

    def _resume(self, closed: Stream, request_id: int) -> Stream:
        """A stream the server closed before the answer, resumed: after the server's retry delay, a GET with
        the last event id it sent, read until the answer to `request_id` arrives (the server may keep that
        stream open after it)."""
        time.sleep(closed.retry_ms / 1000)
        headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": PROTOCOL}
        headers["Last-Event-ID"] = closed.last_event_id or ""
        if self._session:
            headers["Mcp-Session-Id"] = self._session
        request = urllib.request.Request(self.url, None, headers, method="GET")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                resumed = self._events(response, wanted=request_id)
        except urllib.error.HTTPError as exc:
            raise McpFailure(f"{self.url} refused to resume its stream: HTTP {exc.code}") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise McpFailure(f"{self.url} cannot be reached to resume its stream: {exc!r}") from exc
        if resumed.last_event_id is None:  # nothing new: resume from the same place next time
            resumed.last_event_id = closed.last_event_id
        return resumed

    def _post(self, body: dict[str, Any]) -> Stream:
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
            return Stream()
        answer = json.loads(text)
        return Stream(answer if isinstance(answer, list) else [answer])

    def _events(self, response: Any, wanted: int | None = None) -> Stream:
        """The JSON messages of an SSE answer, read as they arrive (each event's data lines joined), with the
        last event id and retry delay it named; it ends with the stream, or once the answer to `wanted`
        arrived. A request the server sends during the call (elicitation, sampling) is answered at once
        (_answer): a server waiting for an answer would hold the call until its own deadline."""
        stream = Stream()
        data: list[str] = []
        for raw in itertools.chain(response, [b""]):  # lazily: a line is handled when it arrives
            line = raw.decode("utf-8").rstrip("\r\n")
            field_name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field_name == "data":
                data.append(value)
            elif field_name == "id":
                stream.last_event_id = value
            elif field_name == "retry" and value.isdigit():
                stream.retry_ms = int(value)
            elif not line and data:
                text = "\n".join(data)
                data = []
                if not text.strip():
                    continue  # a priming event: an id to resume from, no message
                message = json.loads(text)
                if isinstance(message, dict) and "method" in message and "id" in message:
                    self._answer(message)
                elif isinstance(message, dict):
                    stream.messages.append(message)
                    if wanted is not None and message.get("id") == wanted:
                        return stream
        return stream

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
