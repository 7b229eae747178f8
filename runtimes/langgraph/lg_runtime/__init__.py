"""LangGraph wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: LangGraph's prebuilt ReAct agent runs the
loop with langchain-openai's chat model (pointed at WT_MODEL_BASE_URL, the model gateway) and the MCP tools
of langchain-mcp-adapters over streamable HTTP. The Contract C server around the loop is the
windtunnel-inject library; nothing here imports windtunnel.
"""

import os

# Before langchain is imported: no LangSmith tracing, whatever the environment says. The runtime under
# test must talk to nothing but the gateway and its MCP mocks.
os.environ["LANGCHAIN_TRACING_V2"] = "false"
os.environ["LANGSMITH_TRACING"] = "false"

__version__ = "1.0.0"
