"""The `http_inject` runtime: Contract C v1 over HTTP (docs/design.md, docs/contract-c.md).

Only the newest user turn is sent; the endpoint keeps its own per-session history. The response
envelope is validated strictly and its ordered `{name, arguments}` tool calls are converted into the
OpenAI-shaped SPI response that traces already understand.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from windtunnel import _limits as limits
from windtunnel._core.agent_runtime import AgentConfig, MCPHandle, Message, Response
from windtunnel._env_values import env_seconds, process_env
from windtunnel._net.http1 import (
    Http1Client,
    Http1Error,
    Http1Response,
    Http1Timeout,
    Http1TooLarge,
    is_http_url,
)
from windtunnel._net.tls import shared_tls_context
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.errors import (
    EnvelopeError,
    ResetFailedError,
    RuntimeFault,
    RuntimeTimeoutError,
    RuntimeUnavailableError,
)

NAME = "http_inject"
DEFAULT_URL = "http://127.0.0.1:8647"
DEFAULT_TIMEOUT_S = 120.0
TRANSPORT_GRACE_S = 5.0
ENVELOPE_FIELDS = frozenset({"content", "tool_calls", "usage"})


def newest_user_turn(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return message["content"] or ""
    raise RuntimeFault("send() got no user message", hint="the runner always sends at least one user turn")


def validate_envelope(data: object) -> tuple[str, list[dict[str, Any]], dict[str, Any] | None]:
    """Contract C v1 response: `{"content": str, "tool_calls": [{name, arguments}], "usage"?: object}`."""
    if not isinstance(data, dict):
        raise EnvelopeError(
            f"the response body is a {type(data).__name__}, not an object",
            field="<body>",
            hint='answer {"content": "...", "tool_calls": []}',
        )
    extra = sorted(set(data) - ENVELOPE_FIELDS)
    if extra:
        raise EnvelopeError(
            f"unknown field {extra[0]!r} in the response",
            field=extra[0],
            hint="Contract C v1 allows only content, tool_calls and usage",
        )
    content = data.get("content")
    if not isinstance(content, str):
        raise EnvelopeError(
            f"content is {type(content).__name__}, expected a string",
            field="content",
            hint="always answer the final text as content (it may be empty)",
        )
    calls = data.get("tool_calls")
    if not isinstance(calls, list):
        raise EnvelopeError(
            "tool_calls is missing" if "tool_calls" not in data else f"tool_calls is {type(calls).__name__}",
            field="tool_calls",
            hint="send the complete ordered tool-call list of the turn, [] when none",
        )
    for index, call in enumerate(calls):
        _validate_call(index, call)
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise EnvelopeError(
            f"usage is {type(usage).__name__}, expected an object",
            field="usage",
            hint="send OpenAI-style usage or leave it out",
        )
    if usage is not None:
        _validate_usage(usage, "usage")
        for index, call in enumerate(_usage_calls(usage)):
            _validate_usage(call, f"usage.calls[{index}]")
    return content, calls, usage


TOKEN_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "input",
    "output",
    "cached_tokens",
    "cache_read_input_tokens",
    "cacheRead",
)
"""The token counts a usage object may carry (every spelling windtunnel._trace.usage reads, and the total)."""


def _validate_usage(usage: dict[str, Any], where: str) -> None:
    """Each token count is a whole number, 0 or more (null: not reported); a count that is not is refused
    here, where the answer enters, rather than summed or priced."""
    details = usage.get("prompt_tokens_details")
    counts = [(f"{where}.{key}", usage[key]) for key in TOKEN_COUNTS if key in usage]
    if isinstance(details, dict) and "cached_tokens" in details:
        counts.append((f"{where}.prompt_tokens_details.cached_tokens", details["cached_tokens"]))
    for name, value in counts:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise EnvelopeError(
                f"{name} is {json.dumps(value)}, expected a token count (a whole number, 0 or more)",
                field=name,
                hint="report the counts the model returned, as integers, or leave them out",
            )


def _usage_calls(usage: dict[str, Any]) -> list[dict[str, Any]]:
    calls = usage.get("calls")
    if calls is None:
        return []
    if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
        raise EnvelopeError(
            "usage.calls is not a list of objects",
            field="usage.calls",
            hint="send one usage object per model call in usage.calls, or leave it out",
        )
    return calls


def _validate_call(index: int, call: object) -> None:
    where = f"tool_calls[{index}]"
    if not isinstance(call, dict):
        raise EnvelopeError(
            f"{where} is a {type(call).__name__}, expected an object",
            field=where,
            hint='each tool call is {"name": str, "arguments": object}',
        )
    if set(call) != {"name", "arguments"}:
        bad = sorted(set(call) ^ {"name", "arguments"})[0]
        raise EnvelopeError(
            f"{where} has {sorted(call)}; expected exactly name and arguments",
            field=f"{where}.{bad}",
            hint='each tool call is {"name": str, "arguments": object}',
        )
    if not isinstance(call["name"], str) or not call["name"]:
        raise EnvelopeError(f"{where}.name is {call['name']!r}", field=f"{where}.name", hint="name the tool")
    if not isinstance(call["arguments"], dict):
        raise EnvelopeError(
            f"{where}.arguments is {type(call['arguments']).__name__}, expected an object",
            field=f"{where}.arguments",
            hint="send the decoded arguments object",
        )


def to_openai(content: str, calls: list[dict[str, Any]], usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """The OpenAI chat-completion shape, tool calls in the order the endpoint reported them."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                },
            }
            for index, call in enumerate(calls)
        ]
    response: dict[str, Any] = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is not None:
        response["usage"] = dict(usage)
    return response


class HttpInjectHandle:
    """Talks Contract C to one endpoint. Reused by the container driver for runtimes in containers."""

    def __init__(
        self,
        base_url: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        runtime: str = NAME,
        *,
        max_body_bytes: int | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.runtime = runtime
        self.max_body_bytes = max_body_bytes if max_body_bytes is not None else limits.max_body_bytes()
        # Not httpx: this request is made once per agent turn, and the stdlib client costs a third of the
        # CPU (windtunnel._net.http1); TLS is set up only for an https endpoint.
        tls = shared_tls_context() if urlsplit(self.base_url).scheme == "https" else None
        try:
            self._client: Http1Client | None = Http1Client(
                self.base_url,
                timeout=timeout_s + TRANSPORT_GRACE_S,
                ssl_context=tls,
                max_response_bytes=self.max_body_bytes,
            )
        except ValueError:  # the client accepts only an http(s) URL with a host (is_http_url)
            raise RuntimeUnavailableError(
                f"{runtime}: {base_url!r} is not an http(s) URL",
                runtime=runtime,
                hint=f"give the endpoint's base URL, e.g. {DEFAULT_URL}",
            ) from None

    def _http(self) -> Http1Client:
        if self._client is None:
            raise RuntimeUnavailableError(
                f"{self.runtime}: the handle was torn down",
                runtime=self.runtime,
                hint="provision a new handle",
            )
        return self._client

    def send(self, messages: list[Message], session_id: str) -> Response:
        body = {
            "session_id": session_id,
            "message": {"role": "user", "content": newest_user_turn(messages)},
            "timeout_s": self.timeout_s,
        }
        response = self._post("/wt/inject", body)
        if response.status_code != 200:
            raise RuntimeFault(
                f"{self.runtime}: /wt/inject answered {response.status_code}: {_cause(response)}",
                hint="see the runtime's logs; Contract C answers 200 with the envelope",
                runtime=self.runtime,
            )
        try:
            data = response.json()
        except RecursionError as exc:  # the decoder recursed per level: only a hostile body nests so deep
            raise EnvelopeError(
                f"{self.runtime}: /wt/inject answered JSON nested too deeply to read",
                field="<body>",
                hint='answer {"content": "...", "tool_calls": [...]}',
            ) from exc
        except ValueError as exc:
            raise EnvelopeError(
                f"{self.runtime}: /wt/inject answered non-JSON: {response.text[:200]!r}",
                field="<body>",
                hint="answer application/json",
            ) from exc
        return to_openai(*validate_envelope(data))

    def reset_state(self) -> None:
        try:
            response = self._post("/wt/reset", {})
        except RuntimeFault as exc:
            raise ResetFailedError(
                f"{self.runtime}: /wt/reset failed: {exc.message}",
                runtime=self.runtime,
                hint="the endpoint must answer 200 after wiping every session",
            ) from exc
        if response.status_code != 200:
            raise ResetFailedError(
                f"{self.runtime}: /wt/reset answered {response.status_code}: {_cause(response)}",
                hint="reset must wipe every session, memory, index and log, then answer 200",
                runtime=self.runtime,
            )

    def teardown(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # teardown must not raise
                client.close()

    def _post(self, path: str, body: Mapping[str, Any]) -> Http1Response:
        try:
            return self._http().post_json(path, body)
        except Http1Timeout as exc:
            raise RuntimeTimeoutError(
                f"{self.runtime}: no whole answer from {self.base_url}{path} within "
                f"{self.timeout_s + TRANSPORT_GRACE_S}s",
                hint="raise WT_INJECT_TIMEOUT_S or find what hangs (or trickles its answer) in the runtime",
                runtime=self.runtime,
            ) from exc
        except Http1TooLarge as exc:
            raise EnvelopeError(
                f"{self.runtime}: {path} answered more than {exc.limit} bytes ({exc}); it was not read further",
                field="<body>",
                hint=f"answer a smaller envelope, or raise {limits.MAX_BODY_ENV} if such answers are expected",
                runtime=self.runtime,
            ) from exc
        except Http1Error as exc:
            raise RuntimeUnavailableError(
                f"{self.runtime}: cannot reach {self.base_url}{path}: {exc}",
                hint="start the runtime, or point WT_INJECT_URL at it",
                runtime=self.runtime,
            ) from exc


def _cause(response: Http1Response) -> str:
    """What an error answer says, on one line and at most 300 characters."""
    try:
        data = response.json()
    except (ValueError, RecursionError):
        return " ".join(response.text[:300].split()) or "<empty body>"
    if isinstance(data, dict) and "error" in data:
        error = data["error"]
        text = str(error.get("message", error)) if isinstance(error, dict) else str(error)
        return " ".join(text.split())[:300]
    return json.dumps(data)[:300]


class HttpInjectRuntime:
    """Contract C endpoint at `url`; the endpoint owns its prompt, model and tools."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        max_body_bytes: int | None = None,
    ) -> None:
        self.url, self.timeout_s, self.max_body_bytes = url, timeout_s, max_body_bytes

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> HttpInjectHandle:
        refuse_fields(config, frozenset(), NAME)
        return HttpInjectHandle(self.url, self.timeout_s, max_body_bytes=self.max_body_bytes)


class HttpInjectPlugin:
    """Reads WT_INJECT_URL and WT_INJECT_TIMEOUT_S when it builds, never at import."""

    max_concurrency = 1

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env

    def _env_map(self) -> Mapping[str, str]:
        return process_env() if self._env is None else self._env

    def _settings(self) -> tuple[str, float]:
        env = self._env_map()
        timeout = env_seconds(env, "WT_INJECT_TIMEOUT_S", DEFAULT_TIMEOUT_S)
        url = env.get("WT_INJECT_URL", DEFAULT_URL)
        if not is_http_url(url):
            from windtunnel.errors import ConfigFileError

            raise ConfigFileError(
                f"WT_INJECT_URL is {url!r}, not an http(s) URL",
                field="WT_INJECT_URL",
                hint=f"set it to the endpoint's base URL, e.g. {DEFAULT_URL}",
            )
        return url, timeout

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> HttpInjectRuntime:
        url, timeout = self._settings()
        return HttpInjectRuntime(url, timeout, max_body_bytes=limits.max_body_bytes(self._env_map()))

    def lock_key(self, runtime_name: str) -> str:
        return f"{runtime_name}:{self._settings()[0]}"


plugin = HttpInjectPlugin()


def driver(_manifest: RuntimeManifest, *, env: Mapping[str, str] | None = None) -> HttpInjectPlugin:
    """The `http_inject` driver kind (`[driver] kind = "http_inject"` in a runtime.toml): the same plugin as the
    runtime registered under that name; the manifest adds nothing it reads."""
    return HttpInjectPlugin(env)
