"""The OpenAI Agents SDK wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: the SDK's Runner drives the agent loop
against its chat-completions model (pointed at WT_MODEL_BASE_URL, the model gateway) and its streamable
HTTP MCP client. The Contract C server around the loop is the windtunnel-inject library; nothing here
imports windtunnel.
"""

import os

# Before the SDK is imported: it exports traces to OpenAI by default, and the runtime under test must talk
# to nothing but the gateway and its MCP mocks (the loop turns tracing off in code too).
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

__version__ = "1.0.0"
