"""The Claude Agent SDK (and the Claude Code CLI its wheel bundles) wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: the SDK runs the Claude Code CLI for each
turn, pointed at the model gateway (ANTHROPIC_BASE_URL, the root URL) with the MCP mocks as its only tools.
The Contract C server around it is the windtunnel-inject library; nothing here imports windtunnel.
"""

__version__ = "1.0.0"
