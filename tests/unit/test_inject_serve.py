"""windtunnel_inject.serve(): refuses a bad environment before listening, else serves Contract C for real."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from windtunnel_inject import Settings, SettingsError, Transcript, Turn, env_flag, serve

LOOP_MODULE = """
from windtunnel_inject import Settings, Transcript, Turn, serve


class Loop:
    def __init__(self, settings: Settings) -> None:
        self.model = settings.model_name

    async def turn(self, session_id: str, text: str) -> Turn:
        return Transcript().turn(f"{self.model}: {text}")

    async def reset(self) -> None:
        pass


raise SystemExit(serve(Loop, name="tiny"))
"""


class Loop:
    def __init__(self, settings: Settings) -> None:
        self.loud = env_flag(settings.env, "WT_LOUD")  # the loop's own variable, checked before serving

    async def turn(self, session_id: str, text: str) -> Turn:
        return Transcript().turn(text.upper() if self.loud else text)

    async def reset(self) -> None:
        pass


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "tiny runtime: refusing to start: WT_MODEL_BASE_URL is not set"),
        ({"WT_MODEL_BASE_URL": "http://g/v1", "WT_LOUD": "loud"}, "refusing to start: WT_LOUD='loud' is not"),
    ],
)
def test_a_bad_variable_is_refused_with_exit_2_before_anything_listens(
    env: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve(Loop, name="tiny", env=env) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_factory_error_that_is_not_about_settings_is_not_swallowed() -> None:
    def broken(settings: Settings) -> Loop:
        raise SettingsError("WT_X is bad") if settings.model_name == "refuse" else RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        serve(broken, name="tiny", env={"WT_MODEL_BASE_URL": "http://g/v1"})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_the_entry_point_serves_the_loop_on_the_configured_host_and_port(tmp_path: Path) -> None:
    (tmp_path / "tiny_runtime.py").write_text(LOOP_MODULE)
    port = _free_port()
    env = {"WT_MODEL_BASE_URL": "http://g/v1", "WT_MODEL_NAME": "m1", "WT_INJECT_HOST": "127.0.0.1"}
    env["WT_INJECT_PORT"] = str(port)
    process = subprocess.Popen(
        [sys.executable, str(tmp_path / "tiny_runtime.py")], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        body = {"session_id": "s", "message": {"role": "user", "content": "hi"}, "timeout_s": 5}
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.post(f"http://127.0.0.1:{port}/wt/inject", json=body, timeout=5)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "the runtime never listened"
                time.sleep(0.1)
        assert response.json() == {"content": "m1: hi", "tool_calls": []}
        assert json.loads(httpx.post(f"http://127.0.0.1:{port}/wt/reset").text) == {"reset": True}
    finally:
        process.terminate()
        process.communicate(timeout=10)
    # uvicorn shuts down cleanly, then re-raises the signal it caught.
    assert process.returncode in (0, -15)


def test_the_public_names_are_frozen_and_name_the_public_module() -> None:
    import windtunnel_inject

    assert sorted(windtunnel_inject.__all__) == sorted(
        [
            "AgentLoop",
            "ListsTools",
            "SnapshotsState",
            "LoopFactory",
            "Turn",
            "ToolCall",
            "Transcript",
            "TurnFailed",
            "Settings",
            "McpServer",
            "SettingsError",
            "env_flag",
            "env_positive_int",
            "DEFAULT_PORT",
            "DEFAULT_SYSTEM_PROMPT",
            "SAMPLING_KEYS",
            "serve",
            "create_app",
            "decode_arguments",
            "usage_total",
            "find_cause",
            "describe",
        ]
    )
    assert repr(Turn("x")).startswith("Turn(") and Turn.__module__ == "windtunnel_inject"
