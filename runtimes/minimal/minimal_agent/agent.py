"""The agent loop: model calls through the gateway in the wire WT_MODEL_WIRE names, each tool call run once on
its MCP server."""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import urllib.error
import urllib.request
from typing import Any

from minimal_agent.mcp import McpFailure, McpServerLink
from minimal_agent.wires import Parts, Step, ToolCall, part_text, wire_for

MAX_STEPS = 16
TIMEOUT_S = 300.0


class TurnError(Exception):
    """The turn could not finish (the model or a tool server failed); the message says why."""


FAULTS = (
    "normalize_tool_arguments",
    "sort_tool_calls",
    "hide_intermediate_tool_calls",
    "rewrite_final_answer",
    "summarize_tool_results",
    "truncate_long_tool_results",
    "swallow_tool_errors",
    "dedupe_repeated_calls",
    "drop_tool_call_ids",
    "ignore_sampling",
    "hardcode_sampling_defaults",
    "ignore_system_prompt",
    "break_session_affinity",
    "send_user_turn_late",
    "stale_session_header",
    "report_last_call_usage",
    "retry_storm",
    "answer_on_model_error",
    "swallow_dropped_connections",
    "keep_search_index_across_reset",
    "content_as_json",
    "drop_non_text_content",
    "resources_as_json",
    "elicitation_without_defaults",
)
"""WT_FAULT's values: known-broken variants the conformance suite must catch (unset: correct). Each means what
the reference runtime's fault of that name means (runtimes/reference/README.md), in every model wire."""

BUILT_IN_PROMPT = "You are a helpful agent. Use the tools you are given."
PREVIEW_CHARS = 1024  # fault truncate_long_tool_results: a log preview limit applied to the transcript
STORM_ATTEMPTS = 6  # fault retry_storm: a failed model call asked again at once, this many times in all
MADE_UP_ANSWER = "Done."  # fault answer_on_model_error: the answer nobody gave
SHARED_HISTORY = "wt-shared-history"  # fault break_session_affinity: the one history every session uses
ID_KEYS = frozenset({"tool_call_id", "tool_use_id", "call_id"})
"""Where each wire's tool result names the call it answers (chat, Messages' blocks, Responses)."""


class Agent:
    """Sessions of the wire's history items, the configuration from the environment, and one turn at a time
    per session. WT_MODEL_WIRE picks the model API (minimal_agent.wires); the loop is the same for each."""

    def __init__(self, env: dict[str, str]) -> None:
        self.wire = wire_for(env)
        self.url = self.wire.url(env)
        self.fault = env.get("WT_FAULT") or ""
        if self.fault and self.fault not in FAULTS:
            raise SystemExit(
                f"WT_FAULT={self.fault!r} is not a known fault: {', '.join(FAULTS)} (unset = correct)"
            )
        self.model = env.get("WT_MODEL_NAME") or "wt-default"
        prompt = env.get("WT_SYSTEM_PROMPT")
        # fault ignore_system_prompt: the configured prompt is dropped for the built-in one
        self.system = prompt if prompt and self.fault != "ignore_system_prompt" else BUILT_IN_PROMPT
        self.sampling = self._sampling(json.loads(env.get("WT_SAMPLING") or "{}"))
        self.servers = [entry["url"] for entry in json.loads(env.get("WT_MCP_SERVERS") or "[]")]
        self.forms = self._forms(env.get("MINIMAL_ELICITATION") or "refuse")
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.first_session: str | None = None  # fault stale_session_header: the session it keeps sending
        self.notes: list[str] = []  # fault keep_search_index_across_reset: every turn's message, never wiped

    def _forms(self, chosen: str) -> str:
        """MINIMAL_ELICITATION: how a server's elicitation form is answered ("refuse" or "accept"; the
        runtime.toml that sets it declares the same under [mcp])."""
        if chosen not in ("refuse", "accept"):
            raise SystemExit(f"MINIMAL_ELICITATION={chosen!r} is not refuse or accept")
        if chosen == "accept" and self.fault == "elicitation_without_defaults":
            return "accept_without_defaults"  # fault: the required fields only, defaults and all left out
        return chosen

    def reset(self) -> None:
        with self.lock:
            self.sessions.clear()

    def turn(self, session_id: str, text: str) -> dict[str, Any]:
        opened: list[McpServerLink] = []
        try:
            return self._turn(session_id, text, opened)
        finally:
            for link in opened:  # each MCP session ends with the turn (a GET listener with it)
                link.close()

    def _turn(self, session_id: str, text: str, opened: list[McpServerLink]) -> dict[str, Any]:
        key = SHARED_HISTORY if self.fault == "break_session_affinity" else session_id
        with self.lock:
            history = list(self.sessions.get(key, []))
        user = {"role": "user", "content": text}
        start, late = len(history), self.fault == "send_user_turn_late"
        if not late:  # fault send_user_turn_late: the model answers without it; the history gets it after
            history.append(user)
        steps: list[list[dict[str, Any]]] = []  # each model call's tool calls, as the model emitted them
        outputs: dict[str, Parts] = {}  # this turn's tool outputs by call (fault dedupe_repeated_calls)
        links, tools, resources = self._servers(self._header(session_id), opened)
        system = self._with_resources(self._system_for(text), resources)
        for _ in range(MAX_STEPS):
            try:
                answer, step = self._model_step(history, tools, self._header(session_id), system)
            except TurnError:
                if self.fault != "answer_on_model_error":
                    raise
                return {"content": MADE_UP_ANSWER, "tool_calls": self._report(steps)}  # fault: failure hidden
            history += step.items
            steps.append([{"name": call.name, "arguments": call.arguments} for call in step.calls])
            if not step.calls:
                if late:
                    history.insert(start, user)
                with self.lock:
                    self.sessions[key] = history
                reported = {"content": self._answer(step.content, steps), "tool_calls": self._report(steps)}
                if self.fault == "report_last_call_usage" and isinstance(answer.get("usage"), dict):
                    # fault: one aggregate `usage` that is really the last model call's, in the wire's spelling
                    reported["usage"] = answer["usage"]
                return reported
            answered = [(call, self._output(call, links, outputs)) for call in step.calls]
            history += self._results(answered)
        raise TurnError(f"no final answer within {MAX_STEPS} model calls")

    def _model_step(
        self, history: list[dict[str, Any]], tools: list[dict[str, Any]], session: str, system: str
    ) -> tuple[dict[str, Any], Step]:
        """One model call and its answer read in the wire: any failure (an HTTP error, a broken or malformed
        answer) is a TurnError, never retried (runtime.toml declares no retry)."""
        failure = TurnError("no model call was made")
        for _ in range(STORM_ATTEMPTS if self.fault == "retry_storm" else 1):
            try:
                answer = self._complete(history, tools, session, system)
                return answer, self.wire.read(answer)
            except TurnError as exc:
                failure = exc  # fault retry_storm: asked again at once, though no retry is declared
            except (LookupError, TypeError, AttributeError) as exc:
                failure = TurnError(f"the model's answer cannot be read in its wire: {exc!r}")
        raise failure

    def _system_for(self, text: str) -> str:
        """The system prompt of a turn of `text` (a poison adds the earlier turns' messages that share a word
        with it, kept in an index /wt/reset never wipes: in Messages and Responses the prompt travels
        outside the conversation, in `system` and `instructions`)."""
        if self.fault != "keep_search_index_across_reset":
            return self.system
        words = set(re.findall(r"\w{6,}", text.lower()))
        with self.lock:
            recalled = [note for note in self.notes if words & set(re.findall(r"\w{6,}", note.lower()))]
            self.notes.append(text)
        return "\n".join([self.system, *(f"Note from an earlier conversation: {note}" for note in recalled)])

    def _sampling(self, configured: dict[str, Any]) -> dict[str, Any]:
        """WT_SAMPLING as every model call sends it (poisons drop it, or pin two knobs to their defaults)."""
        if self.fault == "ignore_sampling":
            return {}
        if self.fault == "hardcode_sampling_defaults":
            return {**configured, "temperature": 0.0, "tool_choice": "auto"}
        return configured

    def _output(self, call: ToolCall, links: dict[str, McpServerLink], outputs: dict[str, Parts]) -> Parts:
        """The call's result for the model, its MCP content parts, run once on its MCP server (the fault
        branches are poisons)."""
        key = json.dumps([call.name, call.arguments], sort_keys=True)
        if self.fault == "dedupe_repeated_calls" and key in outputs:
            return outputs[key]  # fault: a repeated identical call is run once, reported twice
        link = links.get(call.name)
        try:
            parts, failed = (
                link.call(call.name, call.arguments)
                if link
                else (_text(f"error: no tool named {call.name}"), True)
            )
        except McpFailure:
            if self.fault != "swallow_dropped_connections":
                raise
            # fault: the model is told the lost call worked
            parts, failed = _text(json.dumps({"ok": True})), False
        if self.fault == "swallow_tool_errors" and failed:
            parts = _text(json.dumps({"ok": True}))  # fault: the model is told the failing call succeeded
        if self.fault == "summarize_tool_results":
            parts = _text(f"{call.name} succeeded")  # fault: the model never sees what the tool answered
        if self.fault == "truncate_long_tool_results":  # fault: each text cut at a log preview's limit
            parts = [_preview(part) for part in parts]
        if self.fault == "content_as_json":  # fault: an image or resource sent as its JSON, as text
            parts = [{"type": "text", "text": part_text(part)} for part in parts]
        if self.fault == "drop_non_text_content":  # fault: whatever is not text never reaches the model
            parts = [part for part in parts if part.get("type") == "text"]
        outputs[key] = parts
        return parts

    def _results(self, answered: list[tuple[ToolCall, Parts]]) -> list[dict[str, Any]]:
        """The history items that send the results back, in the wire's shape."""
        items = self.wire.results(answered)
        if self.fault == "drop_tool_call_ids":  # fault: the model cannot tell which call a result answers
            return [_without_ids(item) for item in items]
        return items

    def _answer(self, content: str, steps: list[list[dict[str, Any]]]) -> str:
        if self.fault == "rewrite_final_answer" and any(steps):
            return f"{content} (verified)"  # fault: the answer reported is not the model's
        return content

    def _report(self, steps: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """Every call of the turn, in order, with the arguments as the model emitted them (poisons rewrite
        the report: a rewrite the suite catches)."""
        if self.fault == "hide_intermediate_tool_calls":
            return steps[-1]  # fault: only the final model call's tool calls, i.e. none
        calls = [call for step in steps for call in step]
        if self.fault == "normalize_tool_arguments":  # fault: the arguments' keys sorted
            calls = [
                {**call, "arguments": json.loads(json.dumps(call["arguments"], sort_keys=True))}
                for call in calls
            ]
        if self.fault == "sort_tool_calls":
            calls = sorted(calls, key=lambda call: str(call["name"]))  # fault: the model's order is lost
        return calls

    def _header(self, session_id: str) -> str:
        """The X-WT-Session to send for a turn of `session_id` (a poison keeps sending the first one)."""
        if self.fault != "stale_session_header":
            return session_id
        with self.lock:
            self.first_session = self.first_session or session_id
            return self.first_session

    def _servers(
        self, session: str, opened: list[McpServerLink]
    ) -> tuple[dict[str, McpServerLink], list[dict[str, Any]], list[tuple[str, str]]]:
        """Each MCP server opened for the turn (into `opened`): its tools (by name, and as offered to the
        model) and the text resources it lists."""
        links: dict[str, McpServerLink] = {}
        offered: list[dict[str, Any]] = []
        resources: list[tuple[str, str]] = []
        for url in self.servers:
            link = McpServerLink(url, session, self.forms)
            opened.append(link)
            link.open()
            for tool in link.tools():
                links[tool["name"]] = link
                schema = tool.get("inputSchema") or {"type": "object"}
                offered.append(self.wire.tool(tool["name"], tool.get("description") or "", schema))
            resources += link.resources()
        return links, offered, resources

    def _with_resources(self, system: str, resources: list[tuple[str, str]]) -> str:
        """The system prompt with each listed resource's text after it, as served (runtime.toml [mcp]
        resources = "context"); a poison sends each resource as its JSON instead."""
        if self.fault == "resources_as_json":  # fault: the text escaped, as a JSON string of the contents
            shown = [f"Resource {uri}: {json.dumps({'uri': uri, 'text': text})}" for uri, text in resources]
        else:
            shown = [f"Resource {uri}:\n{text}" for uri, text in resources]
        return "\n\n".join([system, *shown])

    def _complete(
        self, history: list[dict[str, Any]], tools: list[dict[str, Any]], session: str, system: str
    ) -> dict[str, Any]:
        body = self.wire.body(self.model, system, history, tools, self.sampling)
        request = urllib.request.Request(  # noqa: S310 - the gateway's URL (WT_MODEL_BASE_URL / ROOT_URL)
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
        except (OSError, http.client.HTTPException) as exc:  # refused, or the answer broke off
            raise TurnError(f"the model gateway cannot be reached: {exc!r}") from exc
        except ValueError as exc:
            raise TurnError(f"the model gateway's answer is not JSON: {exc}") from exc
        if not isinstance(answer, dict):
            raise TurnError(f"the model gateway's answer is not a JSON object: {str(answer)[:200]!r}")
        return answer


def from_environment() -> Agent:
    return Agent(dict(os.environ))


def _text(text: str) -> Parts:
    return [{"type": "text", "text": text}]


def _preview(part: dict[str, Any]) -> dict[str, Any]:
    text = part.get("text")
    if part.get("type") != "text" or not isinstance(text, str) or len(text) <= PREVIEW_CHARS:
        return part
    return {**part, "text": text[:PREVIEW_CHARS] + "…"}


def _without_ids(item: dict[str, Any]) -> dict[str, Any]:
    """A result item, and its content blocks, without the id of the call it answers (in any wire)."""
    content = item.get("content")
    if isinstance(content, list):
        item = {**item, "content": [_without_ids(block) for block in content if isinstance(block, dict)]}
    return {key: value for key, value in item.items() if key not in ID_KEYS}
