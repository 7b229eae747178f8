"""The egress fence with real containers: a provisioned reference runtime reaches its peers and nothing else,
its Contract C port still answers the runner, and a namespace whose fence is opened is reported open."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._engine.fence import FENCE_ROLE, RUNTIME_CAP_DROP
from windtunnel._engine.network import ROLE_LABEL, RUN_LABEL
from windtunnel._packs.loader import load_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.spi import AgentConfig, Message

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(docker_client: Any, base_image: str, run_label: str) -> Iterator[Any]:
    env = {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}
    runtime = ContainerRuntimePlugin(load_manifest(REPO / "runtimes" / "reference"), env=env).build(
        "reference", "t", None
    )
    runtime.start_mcps(load_pack(str(REPO / "scenarios" / "support_desk")).plans())
    yield runtime
    runtime.close()


def _fences(runtime: Any) -> list[Any]:
    selectors = [f"{RUN_LABEL}={runtime.stack.run_id}", f"{ROLE_LABEL}={FENCE_ROLE}"]
    return list(runtime.stack.client.containers.list(all=True, filters={"label": selectors}))


def test_a_fenced_runtime_reaches_its_peers_and_nothing_else(reference: Any) -> None:
    handle = reference.provision(AgentConfig())
    try:
        started = time.monotonic()
        report = reference.probe_egress()
        probe_s = time.monotonic() - started
        host = next(
            a for a in report.attempts if a.stands_for == "host listener via the run network's gateway"
        )
        assert host.outcome in {"refused", "unreachable"}, report
        assert any("docker0" in a.stands_for for a in report.attempts)
        assert any(a.peer for a in report.attempts) and report.closed, report.problems()
        assert not report.default_route and list(report.routes) == list(report.allowed_routes), report.routes
        # Without the fence the same listener is tried from the run network: recorded, never judged.
        assert report.control and report.control[0].target == host.target
        runtime_container = handle.container.container
        runtime_container.reload()
        assert set(RUNTIME_CAP_DROP) <= set(runtime_container.attrs["HostConfig"]["CapDrop"])
        assert (
            runtime_container.attrs["HostConfig"]["NetworkMode"] == f"container:{handle.container.holder.id}"
        )
        # The runner still calls Contract C through the fence (replies to an inbound call pass).
        reference.stack.gateway().install_script("fence", [{"content": "fenced hello"}])
        answer = handle.send([Message(role="user", content="hi")], "s1")
        assert "fenced hello" in json.dumps(answer), answer
        print(f"egress probe took {probe_s:.2f} s")
    finally:
        reference.stack.gateway().clear_script()
        handle.teardown()
    assert _fences(reference) == []  # the holder goes with its runtime


def test_a_namespace_with_its_fence_opened_is_reported_open(reference: Any) -> None:
    handle = reference.provision(AgentConfig())
    try:
        holder = handle.container.holder
        gateway = reference.stack.network.attrs["IPAM"]["Config"][0]["Gateway"]
        opened = "iptables -P OUTPUT ACCEPT && iptables -F OUTPUT && ip route add default via " + gateway
        code, output = holder.exec_run(["sh", "-c", opened])
        assert code == 0, output
        report = reference.probe_egress()
        problems = report.problems()
        assert report.default_route and any(p.startswith("route 0.0.0.0/0 via") for p in problems), problems
        assert any("host listener via the run network's gateway" in p and "connected" in p for p in problems)
        assert any("metadata" in p and "routable" in p for p in problems), problems
    finally:
        handle.teardown()
