"""`nox -s mcp_conformance`: the official MCP conformance suite's server scenarios against a Wind Tunnel mock."""
