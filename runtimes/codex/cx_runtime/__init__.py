"""Codex CLI wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: each turn runs the Codex CLI once
(`codex exec --json`, later turns of a session `codex exec resume <thread>`), configured through a fresh
CODEX_HOME per session to use the model gateway as a custom Responses provider and the MCP mocks by URL. The
Contract C server around it is the windtunnel-inject library; nothing here imports windtunnel.
"""

__version__ = "1.0.0"
