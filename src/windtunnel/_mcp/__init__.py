"""MCP mock kit: tools over fixture state, served with the official mcp SDK, recording every call."""
