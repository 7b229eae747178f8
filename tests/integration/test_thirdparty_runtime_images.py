"""The third-party runtimes' images for real: built offline from their Dockerfiles, run, and driven over Contract C.

Each image is built as its runtime.toml says (the shared Python runtime Dockerfile, a wheelhouse of its
requirements.txt and the windtunnel-inject library, no network in the build) and started through
windtunnel.testing (the one container path of tests): on the project network with the real gateway
(script mode) and the support_desk mocks in their containers. The certification network's egress fence
is the conformance suite's business; this proves the images themselves work.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from windtunnel._packs.loader import load_pack
from windtunnel._wire.tools import bare
from windtunnel.testing import GatewayContainer, McpMockContainer, WindTunnelStack

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = "scenarios/support_desk"


@pytest.mark.parametrize("name", ["openai-agents", "openai-agents-chat", "pydantic-ai", "claude-agent-sdk"])
def test_the_image_builds_offline_and_serves_the_golden_refund(
    name: str,
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    scenario = load_pack(str(REPO / SUPPORT_DESK)).scenario("refund_damaged_item")
    mocks = [wt_mcp(SUPPORT_DESK, "orders"), wt_mcp(SUPPORT_DESK, "billing")]
    golden = scenario.goldens[0]
    wt_gateway.install(golden.decisions, case=golden.name, session=f"image-{name}")
    runtime = wt_stack.runtime(name, mocks=mocks)
    reply = runtime.send(str(scenario.prompt), session_id=f"image-{name}")
    # As the model emitted them: Claude Code's model calls mcp__orders__lookup_order, the mock's lookup_order.
    assert [bare(name) for name in reply.tool_names] == ["lookup_order", "issue_refund"]
    assert [call["name"] for mock in mocks for call in mock.calls()] == ["lookup_order", "issue_refund"]
    assert httpx.post(f"{runtime.base_url}/wt/reset", timeout=10).status_code == 200
    assert httpx.get(f"{runtime.base_url}/wt/state", timeout=10).json() == {"sessions": {}}
