"""Failures of the openai SDK's client as one line, with the model gateway's own message (extra `openai`).

For agent loops whose model calls go through `openai.AsyncOpenAI` (directly or inside an agent SDK):
`raise TurnFailed(describe_model_failure(exc)) from exc` then answers 502 with what the gateway said, e.g.
"model call to http://gateway:8000/v1/chat/completions answered HTTP 422: script exhausted ... (code
script_exhausted)".
"""

from __future__ import annotations

from collections.abc import Mapping

import openai

from windtunnel_inject._transcript import describe, find_cause

__all__ = ["describe_model_failure"]


def describe_model_failure(exc: BaseException) -> str:
    """The openai client error inside `exc` (however wrapped) as one line; else describe(exc)."""
    found = find_cause(exc, openai.APIError)
    if isinstance(found, openai.APIStatusError):
        return _refusal(found)
    if found is not None:
        url = found.request.url if found.request is not None else "the model gateway"
        return f"model call to {url} failed: {type(found).__name__}: {found.message}"
    return describe(exc)


def _refusal(exc: openai.APIStatusError) -> str:
    body = exc.body
    message, code = exc.message, exc.code
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            message = str(error.get("message") or message)
            code = code or error.get("code") or error.get("type")
    suffix = f" (code {code})" if code else ""
    return f"model call to {exc.request.url} answered HTTP {exc.status_code}: {message}{suffix}"
