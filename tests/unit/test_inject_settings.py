"""windtunnel_inject's WT_* settings: the documented defaults, and one line naming the variable for bad input."""

from __future__ import annotations

import json

import pytest
from windtunnel_inject import (
    DEFAULT_PORT,
    DEFAULT_SYSTEM_PROMPT,
    McpServer,
    Settings,
    SettingsError,
    env_flag,
    env_positive_int,
)

BASE = {"WT_MODEL_BASE_URL": "http://gateway:8000/v1/"}


def test_only_the_model_url_is_required_and_the_server_listens_on_every_address() -> None:
    settings = Settings.from_env(BASE)
    assert settings.model_base_url == "http://gateway:8000/v1"  # the trailing slash dropped
    assert settings.model_name == "wt-default"
    assert settings.mcp_servers == ()
    assert settings.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert settings.sampling == {}
    # In a container the harness reaches the runtime over its network, never on its loopback.
    assert (settings.host, settings.port, settings.max_steps) == ("0.0.0.0", DEFAULT_PORT, 16)
    assert settings.env == BASE


def test_every_contract_variable_is_read() -> None:
    servers = [
        {"name": "orders", "url": "http://orders:8000/mcp"},
        {"name": "billing", "url": "http://b/mcp"},
    ]
    env = {
        **BASE,
        "WT_MODEL_NAME": "m",
        "WT_MCP_SERVERS": json.dumps(servers),
        "WT_SYSTEM_PROMPT": "Be brief.",
        "WT_SAMPLING": json.dumps({"temperature": 0, "top_p": None, "max_tokens": 64, "tool_choice": "none"}),
        "WT_INJECT_HOST": "127.0.0.1",
        "WT_INJECT_PORT": "9000",
        "WT_MAX_STEPS": "3",
        "WT_OWN_KNOB": "kept for the loop",
    }
    settings = Settings.from_env(env)
    assert settings.model_name == "m" and settings.system_prompt == "Be brief."
    assert settings.mcp_servers == (
        McpServer("orders", "http://orders:8000/mcp"),
        McpServer("billing", "http://b/mcp"),
    )
    # A knob set to null is "not set": only what the caller chose is forwarded, key order kept.
    assert list(settings.sampling.items()) == [
        ("temperature", 0),
        ("max_tokens", 64),
        ("tool_choice", "none"),
    ]
    assert (settings.host, settings.port, settings.max_steps) == ("127.0.0.1", 9000, 3)
    assert settings.env["WT_OWN_KNOB"] == "kept for the loop"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "WT_MODEL_BASE_URL is not set: expected the OpenAI-compatible base URL"),
        ({**BASE, "WT_MCP_SERVERS": "[{"}, "WT_MCP_SERVERS is not valid JSON"),
        (
            {**BASE, "WT_MCP_SERVERS": '{"name": "x"}'},
            "WT_MCP_SERVERS must be a JSON list, got dict; set it to",
        ),
        (
            {**BASE, "WT_MCP_SERVERS": '[{"name": "x"}]'},
            'WT_MCP_SERVERS\\[0\\] must be {"name": str, "url": str}',
        ),
        (
            {**BASE, "WT_MCP_SERVERS": '[{"name": "x", "url": "a"}, {"name": "x", "url": "b"}]'},
            "WT_MCP_SERVERS names must be unique; repeated: x: give each server its own name",
        ),
        ({**BASE, "WT_SAMPLING": "[]"}, "WT_SAMPLING must be a JSON object, got list; set it to"),
        (
            {**BASE, "WT_SAMPLING": '{"seed": 1}'},
            "WT_SAMPLING has keys this runtime cannot honour: \\['seed'\\]",
        ),
        ({**BASE, "WT_SAMPLING": '{"temperature": "hot"}'}, "WT_SAMPLING.temperature must be a number"),
        ({**BASE, "WT_SAMPLING": '{"top_p": true}'}, "WT_SAMPLING.top_p must be a number"),
        ({**BASE, "WT_SAMPLING": '{"max_tokens": 0}'}, "WT_SAMPLING.max_tokens must be a positive integer"),
        ({**BASE, "WT_SAMPLING": '{"tool_choice": ""}'}, "WT_SAMPLING.tool_choice must be"),
        ({**BASE, "WT_INJECT_PORT": "http"}, "WT_INJECT_PORT='http' is not an integer: set a positive"),
        ({**BASE, "WT_MAX_STEPS": "0"}, "WT_MAX_STEPS=0 must be positive: set a whole number above 0"),
    ],
)
def test_a_bad_variable_is_refused_in_one_line_naming_it(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message) as raised:
        Settings.from_env(env)
    assert "\n" not in str(raised.value)


def test_a_loops_own_flags_and_numbers_are_read_the_same_way() -> None:
    env = {"ON": "yes", "OFF": "0", "BAD": "maybe", "N": "5"}
    assert (env_flag(env, "ON"), env_flag(env, "OFF"), env_flag(env, "UNSET")) == (True, False, False)
    with pytest.raises(SettingsError, match="BAD='maybe' is not a yes/no value: set it to 1 or 0"):
        env_flag(env, "BAD")
    assert (env_positive_int(env, "N", 1), env_positive_int(env, "UNSET", 7)) == (5, 7)
