"""docs/writing-a-runtime.md's windtunnel-inject examples: the complete runtime runs for real, the sketch uses
only the library's real API.

The complete example (`<!-- example: PATH -->` blocks) is written out as a package and served in-process
by windtunnel_inject against the real model gateway (script mode) and the support_desk pack's MCP mocks
on loopback, as the harness would drive it. The LangGraph sketch (`<!-- sketch: PATH -->`) needs packages
this repository does not install, so it is parsed: every windtunnel_inject name it imports must exist, its
loop must have the two required methods, and it must stay about 50 lines.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import windtunnel_inject
import windtunnel_inject.openai_errors
from windtunnel_inject import Settings
from windtunnel_inject import create_app as inject_app

from windtunnel._gateway.app import create_app as create_gateway
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel._scenario.model import Scenario

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "writing-a-runtime.md"
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
MODEL = "wt-doc-model"
BLOCK = re.compile(r"<!-- (example|sketch): (\S+) -->\n```python\n(.*?)```", re.DOTALL)


def blocks(kind: str) -> dict[str, str]:
    found = {
        path: code for what, path, code in BLOCK.findall(DOC.read_text(encoding="utf-8")) if what == kind
    }
    assert found, f"no <!-- {kind}: ... --> python block in {DOC}"
    return found


@pytest.fixture(scope="module")
def example_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("doc-runtime")
    for path, code in blocks("example").items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code, encoding="utf-8")
    (root / "my_runtime" / "__init__.py").touch()
    return root


@pytest.fixture(scope="module")
def my_loop(example_package: Path) -> Any:
    sys.path.insert(0, str(example_package))
    try:
        return importlib.import_module("my_runtime.loop").MyLoop
    finally:
        sys.path.remove(str(example_package))


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[str, GatewayClient]]:
    with (
        ServerThread(create_gateway(ScriptMode(), models=[MODEL])) as server,
        GatewayClient(server.url) as client,
    ):
        yield server.url, client


@pytest.fixture(scope="module")
def mocks() -> Iterator[list[LoopbackMCP]]:
    handles = start_loopback(load_pack(str(SUPPORT_DESK)).plans())
    yield handles
    stop_loopback(handles)


@pytest.fixture
def client(
    my_loop: Any, gateway: tuple[str, GatewayClient], mocks: list[LoopbackMCP]
) -> Iterator[httpx.Client]:
    url, admin = gateway
    admin.clear_script()
    admin.clear_log()
    for mock in mocks:
        mock.reset()
    env = {
        "WT_MODEL_BASE_URL": f"{url}/v1",
        "WT_MODEL_NAME": MODEL,
        "WT_MCP_SERVERS": json.dumps([{"name": mock.name, "url": mock.url} for mock in mocks]),
        "WT_SYSTEM_PROMPT": "You are the doc agent.",
        "WT_SAMPLING": json.dumps({"temperature": 0.3}),
    }
    app = inject_app(my_loop(Settings.from_env(env)), name="my-runtime")
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def inject(client: httpx.Client, session: str, text: str) -> httpx.Response:
    message = {"role": "user", "content": text}
    return client.post("/wt/inject", json={"session_id": session, "message": message, "timeout_s": 20})


def test_the_complete_example_runs_the_golden_refund_and_reports_every_call(
    client: httpx.Client, gateway: tuple[str, GatewayClient], mocks: list[LoopbackMCP]
) -> None:
    scenario: Scenario = load_pack(str(SUPPORT_DESK)).scenario("refund_damaged_item")
    golden = scenario.goldens[0]
    admin = gateway[1]
    admin.install_script(golden.name, golden.decisions, session="doc")
    response = inject(client, "doc", str(scenario.prompt))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["content"] == golden.decisions[-1].content
    assert body["tool_calls"] == [
        {"name": "lookup_order", "arguments": {"order_id": "A-1042"}},
        {"name": "issue_refund", "arguments": {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}},
    ]
    received = sorted((call for mock in mocks for call in mock.calls()), key=lambda call: call["at"])
    assert [call["name"] for call in received] == ["lookup_order", "issue_refund"]
    log = admin.log()
    assert [(entry["session"], entry["status"]) for entry in log] == [("doc", 200)] * 3
    assert all(entry["sampling"].get("temperature") == 0.3 for entry in log)
    assert len(body["usage"]["calls"]) == 3


def test_the_complete_example_keeps_sessions_apart_and_forgets_them_on_reset(
    client: httpx.Client, gateway: tuple[str, GatewayClient]
) -> None:
    admin = gateway[1]
    admin.install_script("first", [{"content": "Noted.", "tool_calls": []}], session="a")
    assert inject(client, "a", "The code is wt-nonce-1.").status_code == 200
    assert client.post("/wt/reset").json() == {"reset": True}
    admin.install_script("after", [{"content": "No code.", "tool_calls": []}], session="a")
    assert inject(client, "a", "Which code?").status_code == 200
    assert "wt-nonce-1" not in json.dumps(admin.log()[-1]["messages"])
    failed = inject(client, "nobody", "Hello?")  # no script for this session: the gateway refuses
    assert failed.status_code == 502
    assert "no script installed for session 'nobody'" in failed.json()["error"]


def test_the_complete_examples_entry_point_refuses_a_bad_environment(example_package: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "my_runtime"],
        cwd=example_package,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "my-runtime runtime: refusing to start: WT_MODEL_BASE_URL is not set" in done.stderr


def test_the_langgraph_sketch_uses_only_the_librarys_real_api_in_about_fifty_lines() -> None:
    (code,) = blocks("sketch").values()
    tree = ast.parse(code)
    modules = {
        "windtunnel_inject": windtunnel_inject,
        "windtunnel_inject.openai_errors": windtunnel_inject.openai_errors,
    }
    used = [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in modules
        for alias in node.names
    ]
    assert {name for _, name in used} >= {"Settings", "Transcript", "Turn", "TurnFailed", "serve"}
    for module, name in used:
        assert hasattr(modules[module], name), f"the sketch imports {module}.{name}, which does not exist"
    (loop,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    methods = {node.name for node in loop.body if isinstance(node, ast.AsyncFunctionDef)}
    assert {"turn", "reset"} <= methods
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 60, f"the sketch has {len(lines)} non-blank lines; the docs say about 50"
