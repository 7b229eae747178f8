"""The reference runtime's settings: windtunnel_inject's WT_* settings plus its own WT_STREAM and WT_FAULT."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Self

import windtunnel_inject
from windtunnel_inject import SettingsError, env_flag


class Fault(Enum):
    """Known-broken behaviours for the conformance suite's poison runtimes (issue 4). Unset = correct."""

    HIDE_INTERMEDIATE_TOOL_CALLS = "hide_intermediate_tool_calls"
    NORMALIZE_TOOL_ARGUMENTS = "normalize_tool_arguments"
    KEEP_CONVERSATION_ACROSS_RESET = "keep_conversation_across_reset"
    KEEP_SEARCH_INDEX_ACROSS_RESET = "keep_search_index_across_reset"
    IGNORE_SAMPLING = "ignore_sampling"
    BREAK_SESSION_AFFINITY = "break_session_affinity"
    RESET_NOOP = "reset_noop"
    SORT_TOOL_CALLS = "sort_tool_calls"
    IGNORE_SYSTEM_PROMPT = "ignore_system_prompt"
    CACHE_ANSWERS_ACROSS_RESET = "cache_answers_across_reset"
    DROP_TOOL_CALL_IDS = "drop_tool_call_ids"
    HARDCODE_SAMPLING_DEFAULTS = "hardcode_sampling_defaults"
    REPORT_LAST_CALL_USAGE = "report_last_call_usage"
    SUMMARIZE_TOOL_RESULTS = "summarize_tool_results"
    SEND_USER_TURN_LATE = "send_user_turn_late"
    DEDUPE_REPEATED_CALLS = "dedupe_repeated_calls"
    SWALLOW_TOOL_ERRORS = "swallow_tool_errors"
    RETRY_FAILING_CALLS = "retry_failing_calls"
    REWRITE_FINAL_ANSWER = "rewrite_final_answer"
    TRUNCATE_LONG_TOOL_RESULTS = "truncate_long_tool_results"
    STALE_SESSION_HEADER = "stale_session_header"
    RETRY_STORM = "retry_storm"
    ANSWER_ON_MODEL_ERROR = "answer_on_model_error"
    SWALLOW_DROPPED_CONNECTIONS = "swallow_dropped_connections"
    CONTENT_AS_JSON = "content_as_json"
    DROP_NON_TEXT_CONTENT = "drop_non_text_content"
    TRUST_SERVER_MESSAGES = "trust_server_messages"
    OLD_MCP_PROTOCOL_VERSION = "old_mcp_protocol_version"
    ACCEPT_JSON_ONLY = "accept_json_only"
    NO_GET_STREAMS = "no_get_streams"


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings(windtunnel_inject.Settings):
    """Contract C's settings and the runtime's own: WT_STREAM=1 (model answers as SSE streams) and WT_FAULT
    (a poison's known-broken behaviour)."""

    stream: bool = False
    fault: Fault | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Settings from `env`; raises SettingsError naming the variable, WT_STREAM and WT_FAULT included."""
        # super() with arguments: a slots dataclass is a new class, which the bare form's cell does not name.
        contract = super(Settings, cls).from_env(env)
        return replace(contract, stream=env_flag(env, "WT_STREAM"), fault=_fault(env.get("WT_FAULT", "")))


def _fault(text: str) -> Fault | None:
    if not text.strip():
        return None
    try:
        return Fault(text.strip())
    except ValueError:
        known = ", ".join(fault.value for fault in Fault)
        raise SettingsError(
            f"WT_FAULT={text!r} is not a known fault; known faults: {known} (unset = correct)"
        ) from None
