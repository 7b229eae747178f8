"""Entry point: `python -m lg_runtime` validates the WT_* environment, then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from lg_runtime.agent import LangGraphLoop

if __name__ == "__main__":
    raise SystemExit(serve(LangGraphLoop, name="langgraph"))
