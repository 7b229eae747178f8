"""Entry point: `python -m ca_runtime` validates the WT_* environment, then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from ca_runtime.agent import ClaudeAgentLoop

if __name__ == "__main__":
    raise SystemExit(serve(ClaudeAgentLoop, name="claude-agent-sdk"))
