"""The fence holder's resolver and record: answers, refusals, blocked packets, and how the record is counted.

The resolver is served for real on a loopback port (UDP and TCP) and asked by a real DNS client message;
no query leaves this machine (127.0.0.1 only)."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from windtunnel._core.abilities import ReachAttempt
from windtunnel._engine import netguard_agent
from windtunnel._engine.fence import fence_rules, fence_script
from windtunnel._engine.fence_log import EMBEDDED_DNS, PROBE_UID, RECORD_END, attempts_of, read_events
from windtunnel._engine.netguard_agent import (
    NXDOMAIN,
    answer,
    nflog_attributes,
    parse_blocked,
    parse_question,
    serve_tcp,
    serve_udp,
)

PEERS = {"gateway": "172.30.0.2", "mock-support-desk-kb": "172.30.0.3"}


def query(name: str, qtype: int = 1, ident: int = 0x1234) -> bytes:
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split(".") if part)
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", qtype, 1)


def rcode_and_answers(response: bytes) -> tuple[int, int]:
    flags, _, answers = struct.unpack("!HHH", response[2:8])
    return flags & 0x000F, answers


def test_a_peers_name_gets_its_address_and_no_record() -> None:
    response, refused = answer(query("Gateway."), PEERS)
    assert refused is None
    assert rcode_and_answers(response) == (0, 1)
    assert response[:2] == b"\x12\x34" and response[-4:] == socket.inet_aton("172.30.0.2")


def test_a_peers_name_of_another_type_is_no_data_not_a_refusal() -> None:
    response, refused = answer(query("gateway", qtype=28), PEERS)
    assert refused is None and rcode_and_answers(response) == (0, 0)


def test_any_other_name_is_nxdomain_here_and_recorded() -> None:
    response, refused = answer(query("api.example.invalid", qtype=28), PEERS)
    assert rcode_and_answers(response) == (NXDOMAIN, 0)
    assert refused == {"event": "dns", "name": "api.example.invalid", "qtype": "AAAA"}


def test_a_malformed_message_is_a_format_error_and_no_crash() -> None:
    response, refused = answer(b"\x00\x01\x02", PEERS)
    assert refused is None and rcode_and_answers(response)[0] == 1
    with pytest.raises(ValueError, match="compressed"):
        parse_question(struct.pack("!HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c\0\x01\0\x01")


def test_a_blocked_packet_names_destination_port_and_protocol() -> None:
    ip = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0]) + socket.inet_aton("10.0.0.5")
    ip += socket.inet_aton("172.30.0.1") + struct.pack("!HH", 40000, 8080) + bytes(16)
    assert parse_blocked(ip) == {
        "event": "blocked",
        "destination": "172.30.0.1",
        "protocol": "tcp",
        "port": 8080,
    }
    assert parse_blocked(b"\x60" + bytes(39)) is None  # IPv6: not this record's (the fence has none)
    attrs = struct.pack("=BBH", 2, 0, 0) + struct.pack("=HH", 4 + len(ip), 9) + ip
    assert nflog_attributes(attrs)[9] == ip


def _port_pair() -> tuple[socket.socket, socket.socket]:
    """A UDP and a TCP socket bound to one free loopback port (a free UDP port's TCP twin may be taken by
    another worker's server: try the next one)."""
    for _ in range(50):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        tcp = socket.socket()
        try:
            tcp.bind(("127.0.0.1", udp.getsockname()[1]))
        except OSError:
            udp.close()
            tcp.close()
            continue
        return udp, tcp
    raise AssertionError("no loopback port was free for both UDP and TCP in 50 tries")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path]]:
    """The resolver on a free loopback port, UDP and TCP, its record in a temporary file."""
    log = tmp_path / "record.jsonl"
    monkeypatch.setattr(netguard_agent, "LOG_FILE", str(log))
    monkeypatch.setattr(netguard_agent, "_counts", {})
    udp, tcp = _port_pair()
    port = udp.getsockname()[1]
    tcp.listen(4)
    for target, server in ((serve_udp, udp), (serve_tcp, tcp)):
        threading.Thread(target=target, args=(server, PEERS), daemon=True).start()
    yield port, log
    udp.close()
    tcp.close()


def test_the_resolver_answers_over_udp_and_tcp_and_records_refusals(served: tuple[int, Path]) -> None:
    port, log = served
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.settimeout(5)
        client.sendto(query("mock-support-desk-kb"), ("127.0.0.1", port))
        assert client.recv(512)[-4:] == socket.inet_aton("172.30.0.3")
        client.sendto(query("telemetry.example.invalid"), ("127.0.0.1", port))
        assert rcode_and_answers(client.recv(512)) == (NXDOMAIN, 0)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        message = query("update.example.invalid", qtype=1)
        client.sendall(struct.pack("!H", len(message)) + message)
        size = struct.unpack("!H", client.recv(2))[0]
        assert rcode_and_answers(client.recv(size)) == (NXDOMAIN, 0)
        client.sendall(
            struct.pack("!H", len(message)) + message
        )  # the same name again: counted, not a new line
        size = struct.unpack("!H", client.recv(2))[0]
        client.recv(size)
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    assert recorded == [
        {"event": "dns", "name": "telemetry.example.invalid", "qtype": "A", "count": 1},
        {"event": "dns", "name": "update.example.invalid", "qtype": "A", "count": 2},
    ]


def test_the_record_is_counted_by_what_was_tried_and_says_so() -> None:
    lookup: list[dict[str, object]] = [
        {"event": "dns", "name": "statsig.example", "qtype": t} for t in ("A", "AAAA", "A")
    ]
    host: dict[str, object] = {"event": "blocked", "destination": "172.30.0.1", "port": 9, "protocol": "tcp"}
    events: list[dict[str, object]] = [
        *lookup,
        host,
        host,
        {"event": "blocked", "destination": EMBEDDED_DNS, "port": 40001, "protocol": "udp"},
        {"event": "blocked", "destination": EMBEDDED_DNS, "port": 40002, "protocol": "udp"},
    ]
    found = attempts_of(events, {"172.30.0.1": "the host"})
    assert [a.line() for a in found] == [
        "tried to reach statsig.example: 3 lookups (A, AAAA), refused",
        "tried to reach 127.0.0.11/udp (Docker's embedded DNS): 2 packets, blocked",
        "tried to reach 172.30.0.1:9/tcp (the host): 2 packets, blocked",
    ]
    assert (
        ReachAttempt("lookup", "x", "dns", 1, detail="A").line() == "tried to reach x: 1 lookup (A), refused"
    )
    assert PROBE_UID not in {0, 65534}  # never root's nor nobody's, which runtime images use


def test_every_refusal_of_the_fence_is_copied_to_the_record_first() -> None:
    rules = fence_rules("172.30.0.0/16", "172.30.0.1")
    for at, rule in enumerate(rules):
        if "REJECT" in rule:
            before = rules[at - 1]
            assert "NFLOG" in before and before[:-5] == rule[: len(before) - 5], (before, rule)
    embedded = [r for r in rules if f"{EMBEDDED_DNS}/32" in r]
    lo = rules.index(["-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT"])
    assert embedded and all(rules.index(r) < lo for r in embedded)  # blocked before loopback is let through
    assert "nameserver 127.0.0.1" in fence_script("172.30.0.0/16", "172.30.0.1")


def test_a_runtime_that_retries_forever_grows_a_count_not_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "record.jsonl"
    monkeypatch.setattr(netguard_agent, "LOG_FILE", str(log))
    monkeypatch.setattr(netguard_agent, "_counts", {})
    monkeypatch.setattr(netguard_agent, "MAX_DISTINCT", 3)
    for number in range(5):
        for _ in range(2):
            netguard_agent.emit({"event": "dns", "name": f"n{number}.example", "qtype": "A"})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["count"] for line in lines] == [2, 2, 2, 4] and "distinct" in lines[-1]["name"]
    assert attempts_of(lines)[0].count == 4


def test_the_agent_says_fenced_only_after_its_fence_script_succeeds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    netguard_agent.install_fence("echo rules in place; echo fenced")
    assert capsys.readouterr().out.splitlines() == [netguard_agent.FENCED]
    with pytest.raises(SystemExit) as stopped:  # the holder goes, so no runtime ever joins an open namespace
        netguard_agent.install_fence("echo 'iptables: no chain (as a test)' >&2; exit 1")
    assert stopped.value.code == 3
    (line,) = capsys.readouterr().out.splitlines()
    assert line == f"{netguard_agent.NOT_FENCED} (exit 1): iptables: no chain (as a test)"
    with pytest.raises(SystemExit):  # a script that exits 0 but never said `fenced` did not finish
        netguard_agent.install_fence("true")
    assert capsys.readouterr().out.startswith(f"{netguard_agent.NOT_FENCED} (exit 0)")


class _EngineLosingOutput:
    """A holder as docker-py shows it, whose engine answers the first `exec` with exit 0 and no output (seen
    under load in CI) and the next one in full."""

    def __init__(self, record: str) -> None:
        self.answers = [(0, b""), (0, f"{record}{RECORD_END}\n".encode())]
        self.commands: list[list[str]] = []

    def exec_run(self, command: list[str]) -> tuple[int, bytes]:
        self.commands.append(command)
        return self.answers.pop(0)


def test_a_read_of_the_record_whose_output_the_engine_lost_is_made_again() -> None:
    line = json.dumps({"event": "dns", "name": "api.example.com", "qtype": "A", "uid": 0, "count": 2})
    holder = _EngineLosingOutput(line + "\n")
    events = read_events(holder)
    assert len(holder.commands) == 2 and RECORD_END in holder.commands[0][-1]
    assert [e["name"] for e in events] == ["api.example.com"] and attempts_of(events)[0].count == 2
