"""Entry point: `python -m oa_runtime` validates the WT_* environment, then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from oa_runtime.agent import OpenAIAgentsLoop

if __name__ == "__main__":
    raise SystemExit(serve(OpenAIAgentsLoop, name="openai-agents"))
