"""The Wind Tunnel reference runtime: a real agent loop served over Contract C v1 (see ../README.md).

It is a standalone service, as a third-party platform would ship one: it speaks only the OpenAI
chat-completions wire format (to the model), MCP streamable HTTP (to its tools) and Contract C (to the
harness, through the windtunnel-inject library), and imports nothing from windtunnel.
"""

__version__ = "1.0.0"
