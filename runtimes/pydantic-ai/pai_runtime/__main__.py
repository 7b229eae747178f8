"""Entry point: `python -m pai_runtime` validates the WT_* environment, then serves Contract C (windtunnel_inject)."""

from __future__ import annotations

from windtunnel_inject import serve

from pai_runtime.agent import PydanticAILoop

if __name__ == "__main__":
    raise SystemExit(serve(PydanticAILoop, name="pydantic-ai"))
