"""MCP mock kit: what a pack declares (tools over fixture state, and more by opt-in), served with the official mcp SDK, recording every call."""
