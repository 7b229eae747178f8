"""The OpenAI Agents SDK wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: the SDK's Runner drives the agent loop
against its chat-completions model (pointed at WT_MODEL_BASE_URL, the model gateway) and its streamable
HTTP MCP client; Contract C is how the harness talks to it. It imports nothing from windtunnel.
"""

__version__ = "1.0.0"
