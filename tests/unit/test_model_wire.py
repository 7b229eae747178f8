"""Contract C's model wire: `[model] wire` and `side_models` in runtime.toml, WT_MODEL_WIRE and
WT_MODEL_ROOT_URL in the runtime's environment, the side models handed to the gateway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from windtunnel._core.agent_runtime import AgentConfig
from windtunnel._drivers.container_plugin import with_side_models
from windtunnel._engine.topology import GATEWAY_URL_FOR_AGENTS, GatewaySpec, model_root_url, runtime_env
from windtunnel._runtimes.manifest import load_manifest

REPO = Path(__file__).resolve().parents[2]


def manifest_at(tmp: Path, body: str, name: str = "x") -> Path:
    directory = tmp / name
    directory.mkdir()
    (directory / "runtime.toml").write_text(body, encoding="utf-8")
    return directory


SHIPPED_WIRES = {
    "reference": "chat",
    "minimal": "chat",
    "pydantic-ai": "chat",
    "langgraph": "chat",
    "openai-agents-chat": "chat",
    "minimal-messages": "messages",
    "claude-agent-sdk": "messages",
    "minimal-responses": "responses",
    "openai-agents": "responses",
    "codex": "responses",
}


def test_the_wire_defaults_to_chat_and_every_shipped_manifest_declares_the_one_it_speaks() -> None:
    assert load_manifest(REPO / "runtimes" / "reference").wire == "chat"  # it declares none: the default
    for name, wire in SHIPPED_WIRES.items():
        assert load_manifest(REPO / "runtimes" / name).wire == wire, name
    assert load_manifest(REPO / "runtimes" / "claude-agent-sdk").side_models == ("wt-claude-side",)


def test_model_table_is_read_and_a_variant_inherits_it(tmp_path: Path) -> None:
    manifest_at(tmp_path, 'name = "base"\n[model]\nwire = "messages"\nside_models = ["haiku", "tiny"]\n', "b")
    variant = manifest_at(tmp_path, 'name = "v"\nextends = "../b"\n', "v")
    manifest = load_manifest(variant)
    assert (manifest.wire, manifest.side_models) == ("messages", ("haiku", "tiny"))
    override = manifest_at(tmp_path, 'name = "o"\nextends = "../b"\n[model]\nwire = "responses"\n', "o")
    assert load_manifest(override).wire == "responses"
    assert load_manifest(override).side_models == ("haiku", "tiny")


def test_runtime_env_hands_the_wire_and_the_root_url_and_rename_applies(tmp_path: Path) -> None:
    plain = load_manifest(manifest_at(tmp_path, 'name = "p"\n[model]\nwire = "responses"\n', "p"))
    env = runtime_env(plain, AgentConfig(), [], GATEWAY_URL_FOR_AGENTS)
    assert env["WT_MODEL_WIRE"] == "responses"
    assert env["WT_MODEL_BASE_URL"] == "http://gateway:8000/v1"
    assert env["WT_MODEL_ROOT_URL"] == "http://gateway:8000"
    renamed = load_manifest(
        manifest_at(
            tmp_path,
            'name = "r"\n[model]\nwire = "messages"\n'
            '[env]\nrename = { WT_MODEL_ROOT_URL = "ANTHROPIC_BASE_URL", WT_MODEL_WIRE = "MY_WIRE" }\n',
            "r",
        )
    )
    env = runtime_env(renamed, AgentConfig(), [], GATEWAY_URL_FOR_AGENTS)
    assert env["ANTHROPIC_BASE_URL"] == "http://gateway:8000"
    assert env["MY_WIRE"] == "messages"
    assert "WT_MODEL_ROOT_URL" not in env and "WT_MODEL_WIRE" not in env


def test_model_root_url_drops_only_a_trailing_v1() -> None:
    assert model_root_url("http://127.0.0.1:9/v1/") == "http://127.0.0.1:9"
    assert model_root_url("http://h:1/proxy/v1") == "http://h:1/proxy"
    assert model_root_url("http://h:1/v10") == "http://h:1/v10"


def test_side_models_become_gateway_flags_after_the_mode_flags() -> None:
    spec = GatewaySpec(mode="live", extra_args=("--upstream", "http://u/v1"))
    assert with_side_models(spec, ()) is spec
    told = with_side_models(spec, ("haiku", "tiny"))
    assert told.extra_args == ("--upstream", "http://u/v1", "--side-model", "haiku", "--side-model", "tiny")
    assert told.mode == "live"


def _health(url: str) -> dict[str, object]:
    """GET /wt/health, asked again while the announced socket starts accepting (at most 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"{url}/wt/health", timeout=5) as answer:
                health: dict[str, object] = json.load(answer)
                return health
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_wt_gateway_serve_side_model_declares_side_models() -> None:
    """The real `wt gateway serve`, on a free loopback port: its health names the side models given."""
    wt = Path(sys.executable).with_name("wt")
    process = subprocess.Popen(
        [str(wt), "gateway", "serve", "--port", "0", "--side-model", "haiku", "--side-model", "tiny"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_PROXY": "*"},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        url = line.rsplit(" at ", 1)[1].strip().removesuffix("/v1")
        assert _health(url)["side_models"] == ["haiku", "tiny"]
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()
