"""The egress fence with real containers: a provisioned reference runtime reaches its peers and nothing else,
its Contract C port still answers the runner, a namespace whose fence is opened is reported open, and what
the runtime tried to reach (names its resolver refused, connections the fence blocked) is recorded.

Every lookup and connection here is aimed at this machine: names go to the holder's own resolver, which
refuses them locally, and the addresses are the run's bridge (the host) and Docker's embedded DNS asked for
a peer's name (answered by the engine itself, never forwarded)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._bundle.models import Stage
from windtunnel._conformance.suite import Suite
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._engine import fence
from windtunnel._engine.fence import FENCE_ROLE, RUNTIME_CAP_DROP
from windtunnel._engine.netguard_agent import NOT_FENCED
from windtunnel._engine.network import ROLE_LABEL, RUN_LABEL
from windtunnel._packs.loader import load_pack
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stages import reach_record
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.errors import HarnessError
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
    return list(
        runtime.stack.client.containers.list(all=True, filters={"label": selectors}, ignore_removed=True)
    )


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
        # The holder says it is fenced on its log: readable whatever the engine's default log driver.
        assert handle.container.holder.attrs["HostConfig"]["LogConfig"]["Type"] == "json-file"
        # The runner still calls Contract C through the fence (replies to an inbound call pass).
        reference.stack.gateway().install_script("fence", [{"content": "fenced hello"}])
        answer = handle.send([Message(role="user", content="hi")], "s1")
        assert "fenced hello" in json.dumps(answer), answer
        print(f"egress probe took {probe_s:.2f} s")
        # The fence recorded the probe's blocked attempt on the host, as the probe's (PROBE_UID) ...
        recorded = {f"{a.target}:{a.port}" for a in report.fence_recorded if a.kind == "connection"}
        assert host.target in recorded, report.fence_recorded
    finally:
        reference.stack.gateway().clear_script()
        handle.teardown()
    # ... and never as the runtime's (reading the record waits for the holder's retirement) ...
    tried = {f"{a.target}:{a.port}" for a in reference.reach_attempts()}
    assert host.target not in tried, reference.reach_attempts()
    assert _fences(reference) == []  # ... and the holder went with its runtime


def test_a_runtime_container_removed_while_the_run_is_listed_is_left_out_not_an_error(
    reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A retired or prestarted container can go between the engine's listing and its inspection.
    handle = reference.provision(AgentConfig())
    gone = handle.container.container
    api = reference.stack.client.api
    inspect = api.inspect_container

    def removed_first(container: Any) -> Any:
        if container in {gone.id, gone.name}:
            gone.remove(force=True)
        return inspect(container)

    monkeypatch.setattr(api, "inspect_container", removed_first)
    try:
        found = reference.runtime_containers()
    finally:
        monkeypatch.undo()
        handle.teardown()
    assert gone.name not in found, found


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


TRY_TO_REACH = r"""
import socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
print("resolv.conf:", open("/etc/resolv.conf").read().split())
print("gateway:", socket.gethostbyname("gateway"))
for _ in range(3):
    try:
        socket.getaddrinfo("wt-refused.invalid", 443, type=socket.SOCK_STREAM)
        print("wt-refused.invalid: resolved")
    except socket.gaierror as exc:
        print("wt-refused.invalid:", exc)
for _ in range(2):
    with socket.socket() as s:
        s.settimeout(3)
        print("host:", s.connect_ex((host, port)))
# Docker's embedded DNS, asked for a peer's name (the engine answers that itself, never forwarding it).
query = struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x07gateway\x00" + struct.pack("!HH", 1, 1)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    s.settimeout(2)
    try:
        s.sendto(query, ("127.0.0.11", 53))
        print("embedded dns:", len(s.recv(512)), "bytes")
    except OSError as exc:
        print("embedded dns:", exc)
"""


def test_what_a_runtime_tries_to_reach_is_refused_locally_and_recorded(
    reference: Any, tmp_path: Path
) -> None:
    handle = reference.provision(AgentConfig())
    host = reference.stack.network.attrs["IPAM"]["Config"][0]["Gateway"]
    try:
        runtime_container = handle.container.container
        code, output = runtime_container.exec_run(["python3", "-c", TRY_TO_REACH, host, "9"])
        text = output.decode()
        assert code == 0, text
        # The runtime's namespace asks the holder's resolver, which answers the peers and refuses the rest.
        assert "resolv.conf: ['nameserver', '127.0.0.1'" in text, text
        assert f"gateway: {reference.stack.peer_addresses()['gateway']}\n" in text, text
        assert "wt-refused.invalid: resolved" not in text and text.count("wt-refused.invalid:") == 3, text
        assert "embedded dns: 512" not in text and "bytes" not in text, text  # blocked: no answer came back
    finally:
        handle.teardown()  # the holder's record is read before it goes
    by_target = {(a.kind, a.target, a.port): a for a in reference.reach_attempts()}
    refused = by_target[("lookup", "wt-refused.invalid", None)]
    assert refused.count >= 3 and refused.protocol == "dns" and "A" in refused.detail.split(", "), refused
    assert refused.line().startswith("tried to reach wt-refused.invalid: ") and refused.line().endswith(
        "lookups (A, AAAA), refused"
    ), refused.line()
    assert ("connection", host, 9) in by_target, (text, reference.reach_attempts())
    blocked = by_target[("connection", host, 9)]
    assert blocked.protocol == "tcp" and blocked.count >= 2 and "host" in blocked.detail, blocked
    embedded = by_target[("connection", "127.0.0.11", None)]
    assert embedded.protocol == "udp" and embedded.count >= 1 and "embedded DNS" in embedded.detail, embedded
    assert not any(a.target == "gateway" for a in reference.reach_attempts())  # a peer's name is no refusal
    # certify writes this record into the bundle: evidence/<runtime>/publish/reach.json and the INFO check.
    ctx = StageContext(
        config=CertifyConfig(
            runtimes=(), pack_refs=(), root=REPO, out_dir=tmp_path / "bundle", suite_dir=REPO / "conformance"
        ),
        suite=Suite.load(REPO / "conformance"),
        selected=[],
        run=RuntimeRun(name="reference", reach=reference),
        stage=Stage.PUBLISH,
        run_id="fence-test",
    )
    reach_record(ctx)
    (check,) = ctx.run.checks
    assert refused.line() in check.detail and blocked.line() in check.detail, check.detail
    evidence = json.loads((ctx.bundle / check.evidence[0]).read_text())
    assert {"kind": "lookup", "target": "wt-refused.invalid"}.items() <= evidence["attempts"][0].items()


REAL_HOLDER = fence.holder_command
FAILING_SCRIPT = "echo 'iptables: no chain by that name (as a test)' >&2; exit 1"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (  # the agent dies (as where the kernel refuses NFLOG): the holder goes with it, its last words shown
            lambda peers, script: [
                "python3",
                "-c",
                "import sys; sys.exit('nfnetlink_log refused its configuration: (as a test)')",
            ],
            "the holder said: nfnetlink_log refused its configuration: (as a test)",
        ),
        (lambda peers, script: ["sleep", "infinity"], "its holder did not say it was fenced within 20 s"),
        (  # the real agent, whose fence script fails: the script's last words, and the holder goes
            lambda peers, script: REAL_HOLDER(peers, FAILING_SCRIPT),
            f"the holder said: {NOT_FENCED} (exit 1): iptables: no chain by that name (as a test)",
        ),
    ],
    ids=["agent-dies", "agent-hangs", "script-fails"],
)
def test_a_holder_that_cannot_fence_fails_the_start_at_once_naming_why(
    reference: Any, monkeypatch: pytest.MonkeyPatch, command: Callable[[Any, str], list[str]], said: str
) -> None:
    """Without its fence (or its resolver) the runtime must not start: the start fails, with why, not a hang."""
    monkeypatch.setattr(fence, "holder_command", command)
    started = time.monotonic()
    with pytest.raises(HarnessError, match="the egress fence could not be installed") as caught:
        reference.provision(AgentConfig())
    assert said in caught.value.message, caught.value.message
    assert time.monotonic() - started < 60
    assert _fences(reference) == []  # the failed holder is removed
