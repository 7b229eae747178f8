"""The fence holder's one process: a DNS resolver that answers only the run's peers, and the fence's log reader.

Runs as the holder container's command (`python3 -I -S -c <this file> <peers JSON> <NFLOG group> <fence
script>`), in the runtime's network namespace, with the standard library only (the netguard image is the
base image plus iptables and iproute2). Once its resolver listens and its NFLOG socket is bound, it runs the
fence script (windtunnel._engine.fence) and prints FENCED, or NOT_FENCED with the script's last words and
exits: the harness starts the runtime container only after FENCED is in the holder's log. The fence is
installed by this process rather than by an `exec` into the holder, which cost the engine more than the
script itself (docs/design.md, "Containers and network").
It never forwards a query: a peer's name (the gateway's, each mock's alias) gets
its address, any other name NXDOMAIN, answered here. The fence's rules copy every packet they reject to
NFLOG group `<group>`; this process reads them over netlink. Each refused lookup and each blocked packet
is counted in LOG_FILE (a JSON line per distinct attempt with its count), read by windtunnel._engine.fence_log before the holder goes (a file, read by
`exec`, has every line written so far; the engine's log of stdout may lag behind).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

RESOLVER_ADDRESS = "127.0.0.1"
FENCED = "wt-netguard: fenced"
NOT_FENCED = "wt-netguard: not fenced"
LOG_FILE = "/run/wt-netguard.jsonl"
QTYPES = {
    1: "A",
    2: "NS",
    5: "CNAME",
    6: "SOA",
    12: "PTR",
    15: "MX",
    16: "TXT",
    28: "AAAA",
    33: "SRV",
    65: "HTTPS",
}
PROTOCOLS = {1: "icmp", 6: "tcp", 17: "udp"}
NXDOMAIN, FORMERR = 3, 1
# netlink / nfnetlink_log constants (linux/netfilter/nfnetlink_log.h)
NETLINK_NETFILTER = 12
NFNL_SUBSYS_ULOG = 4
NFULNL_MSG_PACKET, NFULNL_MSG_CONFIG = 0, 1
NFULA_CFG_CMD, NFULA_CFG_MODE, NFULA_CFG_QTHRESH = 1, 2, 4
NFULNL_CFG_CMD_BIND = 1
NFULNL_COPY_PACKET = 2
NFULA_PAYLOAD, NFULA_UID = 9, 11
NLM_F_REQUEST, NLM_F_ACK = 1, 4

MAX_DISTINCT = 2000
OVERFLOW = {
    "event": "dns",
    "name": f"(more than {MAX_DISTINCT} distinct targets: the rest counted here)",
    "qtype": "-",
}
_log_lock = threading.Lock()
_counts: dict[str, int] = {}


def emit(record: dict[str, object]) -> None:
    """Count `record` and rewrite the record file: one line per distinct attempt with its count, so a runtime
    that retries forever grows a number, not the file."""
    key = json.dumps(record, sort_keys=True)
    with _log_lock:
        if key not in _counts and len(_counts) >= MAX_DISTINCT:
            key = json.dumps(OVERFLOW, sort_keys=True)
        _counts[key] = _counts.get(key, 0) + 1
        text = "".join(json.dumps({**json.loads(k), "count": n}) + "\n" for k, n in _counts.items())
        partial = Path(LOG_FILE + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(LOG_FILE)  # whoever reads it sees the whole record, never half a line


def parse_question(query: bytes) -> tuple[int, str, int, int]:
    """(id, lower-case name without the final dot, qtype, end of the question) of a DNS query.
    ValueError when it is not one."""
    if len(query) < 12:
        raise ValueError("short header")
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        raise ValueError("not a query with one question")
    labels, at = [], 12
    while True:
        if at >= len(query):
            raise ValueError("name runs past the message")
        length = query[at]
        if length & 0xC0:
            raise ValueError("compressed name in a question")
        at += 1
        if length == 0:
            break
        labels.append(query[at : at + length].decode("ascii", "replace"))
        at += length
    if at + 4 > len(query):
        raise ValueError("no type and class")
    qtype = struct.unpack("!H", query[at : at + 2])[0]
    return ident, ".".join(labels).lower(), qtype, at + 4


def answer(query: bytes, peers: dict[str, str]) -> tuple[bytes, dict[str, object] | None]:
    """The response to `query` and, when the name was refused, the record to log (else None)."""
    try:
        ident, name, qtype, end = parse_question(query)
    except ValueError:
        header = query[:2].ljust(2, b"\0") + struct.pack("!HHHHH", 0x8000 | FORMERR, 0, 0, 0, 0)
        return header, None
    question = query[12:end]
    rd = struct.unpack("!H", query[2:4])[0] & 0x0100
    address = peers.get(name)
    if address is None:
        flags = 0x8000 | 0x0400 | rd | NXDOMAIN  # response, authoritative, NXDOMAIN
        refused: dict[str, object] = {"event": "dns", "name": name, "qtype": QTYPES.get(qtype, str(qtype))}
        return struct.pack("!HHHHHH", ident, flags, 1, 0, 0, 0) + question, refused
    records = b""
    if qtype == 1:  # A: the peer's address; any other type of a peer's name: no data (NOERROR, no answer)
        records = struct.pack("!HHHLH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(address)
    flags = 0x8000 | 0x0400 | rd
    count = 1 if records else 0
    return struct.pack("!HHHHHH", ident, flags, 1, count, 0, 0) + question + records, None


def parse_blocked(payload: bytes) -> dict[str, object] | None:
    """An IPv4 packet's destination, protocol and (TCP/UDP) destination port, or None for anything else."""
    if len(payload) < 20 or payload[0] >> 4 != 4:
        return None
    header_length = (payload[0] & 0x0F) * 4
    proto = payload[9]
    record: dict[str, object] = {
        "event": "blocked",
        "destination": socket.inet_ntoa(payload[16:20]),
        "protocol": PROTOCOLS.get(proto, f"ip-{proto}"),
    }
    if proto in (6, 17) and len(payload) >= header_length + 4:
        record["port"] = struct.unpack("!H", payload[header_length + 2 : header_length + 4])[0]
    return record


def nflog_attributes(body: bytes) -> dict[int, bytes]:
    """The netlink attributes after a message's nfgenmsg header (4 bytes)."""
    found, at = {}, 4
    while at + 4 <= len(body):
        length, kind = struct.unpack("=HH", body[at : at + 4])
        if length < 4:
            break
        found[kind & 0x7FFF] = body[at + 4 : at + length]
        at += (length + 3) & ~3
    return found


def _nflog_config(group: int, attribute: int, value: bytes, seq: int) -> bytes:
    attr = struct.pack("=HH", 4 + len(value), attribute) + value
    attr += b"\0" * (-len(attr) % 4)
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(group)) + attr
    kind = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG
    return struct.pack("=LHHLL", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body


def open_nflog(group: int) -> socket.socket:
    """A netlink socket bound to NFLOG `group`, copying whole packets; OSError when the kernel refuses."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    bind = struct.pack("=B", NFULNL_CFG_CMD_BIND) + b"\0"
    mode = struct.pack("!LBB", 0xFFFF, NFULNL_COPY_PACKET, 0)
    # One packet per message: the kernel's default batches up to 100 packets or 1 s, and the record is read
    # right after the runtime's last attempt.
    qthresh = struct.pack("!L", 1)
    settings = ((NFULA_CFG_CMD, bind), (NFULA_CFG_MODE, mode), (NFULA_CFG_QTHRESH, qthresh))
    for seq, (attribute, value) in enumerate(settings, start=1):
        sock.send(_nflog_config(group, attribute, value, seq))
        reply = sock.recv(65536)
        if len(reply) >= 20 and struct.unpack("=H", reply[4:6])[0] == 2:  # NLMSG_ERROR
            code = struct.unpack("=i", reply[16:20])[0]
            if code != 0:
                raise OSError(-code, f"nfnetlink_log refused its configuration: {os.strerror(-code)}")
    return sock


def read_nflog(sock: socket.socket) -> None:
    packet_kind = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET
    while True:
        data, at = sock.recv(1 << 18), 0
        while at + 16 <= len(data):
            length, kind = struct.unpack("=LH", data[at : at + 6])
            if length < 16:
                break
            if kind == packet_kind:
                attributes = nflog_attributes(data[at + 16 : at + length])
                payload = attributes.get(NFULA_PAYLOAD)
                record = parse_blocked(payload) if payload else None
                if record is not None:
                    uid = attributes.get(NFULA_UID)  # the sending socket's owner, when a local socket sent it
                    if uid is not None and len(uid) == 4:
                        record["uid"] = struct.unpack("!L", uid)[0]
                    emit(record)
            at += (length + 3) & ~3


def serve_udp(sock: socket.socket, peers: dict[str, str]) -> None:
    while sock.fileno() != -1:  # a closed socket ends it; any other error is one client's and is skipped
        try:
            query, client = sock.recvfrom(4096)
            response, refused = answer(query, peers)
            if refused:
                emit(refused)  # recorded before it is answered: whoever has the answer finds the record
            sock.sendto(response, client)
        except OSError:
            continue


def serve_tcp(server: socket.socket, peers: dict[str, str]) -> None:
    while server.fileno() != -1:
        try:
            conn, _ = server.accept()
        except OSError:
            continue
        threading.Thread(target=_tcp_client, args=(conn, peers), daemon=True).start()


def _tcp_client(conn: socket.socket, peers: dict[str, str]) -> None:
    with conn:
        conn.settimeout(5)
        try:
            while True:
                size = _read_exactly(conn, 2)
                if size is None:
                    return
                query = _read_exactly(conn, struct.unpack("!H", size)[0])
                if query is None:
                    return
                response, refused = answer(query, peers)
                if refused:
                    emit(refused)
                conn.sendall(struct.pack("!H", len(response)) + response)
        except OSError:
            return


def _read_exactly(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def main(argv: list[str]) -> None:
    peers = {name.lower(): address for name, address in json.loads(argv[1]).items()}
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((RESOLVER_ADDRESS, 53))
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((RESOLVER_ADDRESS, 53))
    tcp.listen(16)
    nflog = open_nflog(int(argv[2]))
    for target, args in ((serve_udp, (udp, peers)), (serve_tcp, (tcp, peers)), (read_nflog, (nflog,))):
        threading.Thread(target=target, args=args, daemon=True).start()
    install_fence(argv[3])
    threading.Event().wait()


def install_fence(script: str) -> None:
    """Run the fence script (the resolver it names already listens); say FENCED, or NOT_FENCED and exit."""
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False)
    said = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not said.endswith("fenced"):
        say(f"{NOT_FENCED} (exit {done.returncode}): {said[-400:]}")
        sys.exit(3)
    say(FENCED)


def say(line: str) -> None:
    """A line on stdout, flushed at once: the engine's log of this container is where the harness reads it."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
