"""`wt mcp list` and the errors of `wt mcp serve` as users run them (serving is an integration test)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = str(REPO / "scenarios" / "support_desk")


def wt(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_list_prints_servers_and_tools() -> None:
    done = wt("mcp", "list", "--pack", SUPPORT_DESK)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "pack support_desk"
    assert "  server orders: 1 tool(s)" in lines and "  server billing: 1 tool(s)" in lines
    assert any(line.startswith("    issue_refund: Refund an amount") for line in lines)


def test_list_as_json_carries_the_schemas() -> None:
    done = wt("mcp", "list", "--pack", SUPPORT_DESK, "--format", "json")
    listing = json.loads(done.stdout)
    (lookup,) = listing["servers"]["orders"]
    assert lookup["name"] == "lookup_order"
    assert lookup["inputSchema"]["required"] == ["order_id"]


def test_a_relative_pack_path_is_read_from_the_working_directory() -> None:
    done = wt("mcp", "list", "--pack", "support_desk", cwd=REPO / "scenarios")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pack support_desk")


def test_an_unknown_server_is_a_usage_error_listing_the_known_ones() -> None:
    done = wt("mcp", "serve", "--pack", SUPPORT_DESK, "--server", "bill", "--port", "0")
    assert done.returncode == 2
    assert "pack 'support_desk' has no MCP server 'bill'; its servers: billing, orders" in done.stderr


def test_a_missing_pack_is_a_usage_error(tmp_path: Path) -> None:
    done = wt("mcp", "list", "--pack", str(tmp_path))
    assert done.returncode == 2
    assert "holds no pack.py" in done.stderr


def test_a_port_in_use_is_an_error_naming_it() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = wt("mcp", "serve", "--pack", SUPPORT_DESK, "--server", "billing", "--port", str(port))
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_mcp_without_a_command_shows_its_help() -> None:
    done = wt("mcp")
    assert done.returncode == 2
    assert "serve" in done.stderr and "list" in done.stderr


def test_a_malformed_allowed_host_is_a_usage_error_before_serving() -> None:
    done = wt(
        "mcp",
        "serve",
        "--pack",
        SUPPORT_DESK,
        "--server",
        "billing",
        "--port",
        "0",
        "--allow-host",
        "mock:80",
    )
    assert done.returncode == 2
    assert "--allow-host 'mock:80' is not a host name" in done.stderr
    assert "Traceback" not in done.stderr and "serving MCP mock" not in done.stderr
