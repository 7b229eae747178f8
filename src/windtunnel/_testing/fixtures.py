"""pytest fixtures wt_stack, wt_gateway and wt_mcp (registered through the `pytest11` entry point).

Opt-in: this module imports neither testcontainers nor docker, and no container starts until a test asks
for one of these fixtures. The stack starts once per session (the images are built or reused then) and is
reset before every test; runtimes a test starts are removed after it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from windtunnel._env_values import process_env

if TYPE_CHECKING:
    from windtunnel._testing.services import GatewayContainer, McpMockContainer
    from windtunnel._testing.stack import WindTunnelStack


@pytest.fixture(scope="session")
def wt_stack_session(request: pytest.FixtureRequest) -> Iterator[WindTunnelStack]:
    """The session's stack (gateway in script mode), its project the pytest rootdir; removed at the end."""
    from windtunnel._testing.stack import WindTunnelStack
    from windtunnel.errors import EngineUnavailableError

    stack = WindTunnelStack(project=Path(str(request.config.rootpath)), session=f"pytest-{os.getpid()}")
    try:
        stack.start()
    except EngineUnavailableError as exc:
        if process_env().get("CI"):
            pytest.fail(f"windtunnel.testing needs a Docker engine: {exc}")
        pytest.skip(f"windtunnel.testing needs a Docker engine: {exc}")
    yield stack
    stack.stop()


@pytest.fixture
def wt_stack(wt_stack_session: WindTunnelStack) -> Iterator[WindTunnelStack]:
    """The running stack, reset for this test (no script, empty request log, fresh mocks); the runtimes the
    test starts with wt_stack.runtime() are removed after it."""
    wt_stack_session.reset()
    yield wt_stack_session
    wt_stack_session.stop_runtimes()


@pytest.fixture
def wt_gateway(wt_stack: WindTunnelStack) -> GatewayContainer:
    """The stack's model gateway, with no script installed and an empty request log."""
    return wt_stack.gateway


@pytest.fixture
def wt_mcp(wt_stack: WindTunnelStack) -> Callable[[str, str], McpMockContainer]:
    """`wt_mcp(pack, server)`: that pack's mock, started on first use, fresh for this test."""
    return wt_stack.mcp
