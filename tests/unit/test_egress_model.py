"""The egress evidence model, route parsing and the fence's firewall rules, without containers."""

from __future__ import annotations

from types import SimpleNamespace

from windtunnel._engine.egress import bridge_gateways, parse_ipv4_routes, parse_ipv6_routes, route_for
from windtunnel._engine.fence import fence_rules, fence_script, restore_input
from windtunnel.spi import EgressAttempt, EgressReport

ROUTE_HEADER = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
SUBNET_ONLY = ROUTE_HEADER + "eth0\t0070A8C0\t00000000\t0001\t0\t0\t0\t00F0FFFF\t0\t0\t0\n"
WITH_DEFAULT = SUBNET_ONLY + "eth0\t00000000\t0170A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
IPV6 = (
    "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n"
    "00000000000000000000000000000001 80 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000000 00000002 00000000 80200001 lo\n"
)
PEER = EgressAttempt("wt-gateway:8080", "peer: the model gateway", "connected", peer=True)
HOST = EgressAttempt("192.168.112.1:4000", "host listener via the run network's gateway", "unreachable")


def test_proc_net_route_reads_as_networks_and_gateways() -> None:
    assert [str(r) for r in parse_ipv4_routes(SUBNET_ONLY)] == ["192.168.112.0/20"]
    assert [str(r) for r in parse_ipv4_routes(WITH_DEFAULT)] == [
        "192.168.112.0/20",
        "0.0.0.0/0 via 192.168.112.1",
    ]


def test_ipv6_routes_leave_loopback_out() -> None:
    assert [str(r) for r in parse_ipv6_routes(IPV6)] == ["fe80::/64"]


def test_a_lookup_picks_the_longest_prefix_and_finds_none_without_a_default() -> None:
    assert route_for("169.254.169.254", parse_ipv4_routes(SUBNET_ONLY)) is None
    found = route_for("169.254.169.254", parse_ipv4_routes(WITH_DEFAULT))
    assert found is not None and found.gateway == "192.168.112.1"
    inside = route_for("192.168.112.7", parse_ipv4_routes(WITH_DEFAULT))
    assert inside is not None and inside.gateway is None


def test_a_closed_report_needs_a_peer_that_answered_and_nothing_else() -> None:
    closed = EgressReport(
        attempts=(PEER, HOST), routes=("192.168.112.0/20",), allowed_routes=("192.168.112.0/20",)
    )
    assert closed.closed and not closed.default_route
    silent = EgressReport(attempts=(HOST,), routes=(), allowed_routes=("192.168.112.0/20",))
    assert "no peer was tried" in silent.problems()[0]
    dead_peer = EgressReport(
        attempts=(EgressAttempt(PEER.target, PEER.stands_for, "refused", peer=True), HOST),
        routes=(),
        allowed_routes=(),
    )
    assert dead_peer.problems() == ["peer peer: the model gateway (wt-gateway:8080) did not answer: refused"]


def test_a_connection_a_routable_lookup_or_an_extra_route_opens_it() -> None:
    reached = EgressAttempt(HOST.target, HOST.stands_for, "connected")
    routable = EgressAttempt("169.254.169.254", "metadata", "routable")
    report = EgressReport(
        attempts=(PEER, reached, routable),
        routes=("192.168.112.0/20", "0.0.0.0/0 via 192.168.112.1"),
        allowed_routes=("192.168.112.0/20",),
    )
    assert report.default_route and not report.closed
    assert report.problems() == [
        "host listener via the run network's gateway (192.168.112.1:4000): connected",
        "metadata (169.254.169.254): routable",
        "route 0.0.0.0/0 via 192.168.112.1 (only 192.168.112.0/20 may exist)",
    ]


def test_the_fence_blocks_the_host_before_it_allows_the_subnet() -> None:
    rules = fence_rules("192.168.112.0/20", "192.168.112.1")
    assert rules[0] == ["-P", "OUTPUT", "DROP"]
    targets = [rule[rule.index("-d") + 1] for rule in rules if "-d" in rule and "NFLOG" not in rule]
    # first match wins: Docker's embedded DNS and the host are refused, then the subnet is allowed
    assert targets == ["127.0.0.11/32", "192.168.112.1/32", "192.168.112.0/20"]
    host = next(rule for rule in rules if "192.168.112.1/32" in rule and "REJECT" in rule)
    assert host[-3:] == ["REJECT", "--reject-with", "icmp-admin-prohibited"]
    assert any("ESTABLISHED,RELATED" in rule for rule in rules)  # replies to the runner's calls pass
    script = fence_script("192.168.112.0/20", "192.168.112.1")
    assert script.index("route del default") < script.index(":OUTPUT DROP [0:0]") and script.endswith(
        "echo fenced\n"
    )
    # one iptables-restore per table, holding every rule in order (the policy as the chain's header)
    assert restore_input(rules).splitlines() == [
        "*filter",
        ":OUTPUT DROP [0:0]",
        *(" ".join(rule) for rule in rules[1:]),
        "COMMIT",
    ]
    assert script.count("-restore --noflush <<'RULES'") == 2 and restore_input(rules) in script


def test_a_bridge_listed_without_its_gateway_is_named_by_the_host_address_in_its_subnet() -> None:
    # A fresh engine lists its default bridge as {"Subnet": "172.17.0.0/16"} with no "Gateway".
    default = SimpleNamespace(name="bridge", attrs={"IPAM": {"Config": [{"Subnet": "172.17.0.0/16"}]}})
    run = SimpleNamespace(
        name="wt-run", attrs={"IPAM": {"Config": [{"Subnet": "10.9.0.0/24", "Gateway": "10.9.0.1"}]}}
    )
    bare = SimpleNamespace(name="no-ipam", attrs={})
    addresses = ["10.0.0.5", "172.17.0.1", "fd00::1"]
    found = bridge_gateways([default, run, bare], addresses)
    assert found == {"172.17.0.1": "bridge", "10.9.0.1": "wt-run"}
