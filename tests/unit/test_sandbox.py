"""The harness's own view of a runtime container: the rule that cuts it off from one MCP server."""

from __future__ import annotations

from windtunnel._drivers.sandbox import cut_off_rule


def test_the_cut_off_rule_resets_every_packet_to_the_server_before_any_accept() -> None:
    rule = cut_off_rule("http://mock-wt-conformance-notes:8000/mcp", "192.168.80.3")
    # First in the chain: ahead of the rule that lets open connections' packets pass.
    assert rule[:3] == ["-I", "OUTPUT", "1"]
    assert rule[3:] == [
        "-d", "192.168.80.3/32", "-p", "tcp", "--dport", "8000", "-j", "REJECT", "--reject-with", "tcp-reset",
    ]  # fmt: skip


def test_a_url_without_a_port_is_cut_off_on_80() -> None:
    assert "80" in cut_off_rule("http://mock-notes/mcp", "10.0.0.2")
