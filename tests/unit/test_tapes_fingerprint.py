"""Fingerprints: every allowlisted part changes them; auth, ids, user-agent and other headers never do."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
import rfc8785

from windtunnel._chat.mode import ChatRequest
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.fingerprint import (
    BODY_FIELDS,
    FINGERPRINT_PREFIX,
    fingerprint,
    normalize_upstream,
    request_parts,
)
from windtunnel._tapes.model import RecordedResponse
from windtunnel._tapes.replay import ReplayMode

UPSTREAM = "https://api.example.test/v1"
PATH = "/v1/chat/completions"

BASE: dict[str, Any] = {
    "model": "gpt-test",
    "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "refund the mug"}],
    "tools": [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}],
    "tool_choice": "auto",
    "temperature": 0.2,
    "top_p": 0.9,
    "max_tokens": 256,
    "max_completion_tokens": 300,
    "response_format": {"type": "text"},
    "stream": False,
    "stream_options": {"include_usage": True},
    "stop": ["END"],
    "seed": 7,
    "n": 1,
    "parallel_tool_calls": True,
    "user": "end-user-42",
    "metadata": {"request_id": "r-1"},
}

# One changed value per allowlisted body field that BASE sets.
BODY_CHANGES: dict[str, Any] = {
    "model": "gpt-other",
    "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "refund the cup"}],
    "tools": [{"type": "function", "function": {"name": "issue_refund", "parameters": {"type": "object"}}}],
    "tool_choice": "required",
    "temperature": 0.3,
    "top_p": 1.0,
    "max_tokens": 257,
    "max_completion_tokens": 301,
    "response_format": {"type": "json_object"},
    "stream": True,
    "stream_options": {"include_usage": False},
    "stop": ["STOP"],
    "seed": 8,
    "n": 2,
    "parallel_tool_calls": False,
}


def fp(
    method: str = "POST", upstream: str = UPSTREAM, path: str = PATH, body: dict[str, Any] | None = None
) -> str:
    return fingerprint(request_parts(method, upstream, path, BASE if body is None else body))


def test_the_fingerprint_is_sha256_of_the_prefix_and_rfc8785_json() -> None:
    parts = request_parts("post", UPSTREAM, PATH, {"model": "m", "messages": []})
    expected = hashlib.sha256(FINGERPRINT_PREFIX + rfc8785.dumps(parts)).hexdigest()
    assert fingerprint(parts) == expected
    assert FINGERPRINT_PREFIX == b"wt-tape-fp-v1\n"
    assert parts["method"] == "POST"


@pytest.mark.parametrize("field", sorted(BODY_CHANGES))
def test_a_change_in_any_allowlisted_body_field_changes_the_fingerprint(field: str) -> None:
    assert field in BODY_FIELDS
    changed = copy.deepcopy(BASE)
    changed[field] = BODY_CHANGES[field]
    assert fp(body=changed) != fp()


@pytest.mark.parametrize("field", sorted(BODY_FIELDS - set(BASE)))
def test_adding_any_other_allowlisted_body_field_changes_the_fingerprint(field: str) -> None:
    assert fp(body={**BASE, field: 1}) != fp()


@pytest.mark.parametrize(
    ("part", "value"),
    [("method", "PUT"), ("upstream", "https://api.other.test/v1"), ("path", "/v1/completions")],
)
def test_method_upstream_and_path_change_the_fingerprint(part: str, value: str) -> None:
    parts = {"method": "POST", "upstream": UPSTREAM, "path": PATH, part: value}
    assert fp(parts["method"], parts["upstream"], parts["path"]) != fp()


@pytest.mark.parametrize(
    "extra",
    [
        {"user": "someone-else"},
        {"metadata": {"request_id": "r-2"}},
        {"store": True},
        {"request_id": "req-123"},
    ],
)
def test_ids_and_bookkeeping_in_the_body_do_not_change_the_fingerprint(extra: dict[str, Any]) -> None:
    assert fp(body={**BASE, **extra}) == fp()


def test_auth_ids_and_user_agent_headers_never_reach_the_fingerprint() -> None:
    # Two recorded requests that differ only in headers answer each other's replay.
    builder = TapeBuilder("t", upstream=UPSTREAM)
    response = RecordedResponse(status=200, body={"choices": []})
    first = builder.add(
        "POST", PATH, BASE, response, headers={"authorization": "Bearer a", "user-agent": "x/1"}
    )
    replay = ReplayMode(builder.build())
    other_headers = {
        "authorization": "Bearer b-completely-different",
        "x-request-id": "req-999",
        "openai-organization": "org-2",
        "user-agent": "OpenAI/Python 9.9",
    }
    request = ChatRequest(method="POST", path=PATH, body=BASE, headers=other_headers)
    assert replay.match(request.method, request.path, request.body).fingerprint == first.fingerprint


def test_query_strings_credentials_and_trailing_slashes_do_not_change_the_upstream() -> None:
    assert normalize_upstream("HTTPS://user:secret@API.example.test/v1/?key=abc") == UPSTREAM
    assert fp(upstream="https://API.example.test/v1/") == fp()
    assert fp(path=PATH + "?api-version=1") == fp()


def test_json_numbers_hash_by_value_and_huge_integers_are_accepted() -> None:
    assert fp(body={**BASE, "temperature": 1}) == fp(body={**BASE, "temperature": 1.0})
    assert fp(body={**BASE, "seed": 2**63 - 1}) != fp(body={**BASE, "seed": 2**63 - 2})


def test_secret_looking_strings_are_redacted_before_hashing() -> None:
    secret = "sk-" + "A1" * 20
    body = {**BASE, "messages": [{"role": "user", "content": f"my key is {secret}"}]}
    parts = request_parts("POST", UPSTREAM, PATH, body)
    assert secret not in str(parts)
    assert "[REDACTED:openai-key]" in parts["body"]["messages"][0]["content"]
