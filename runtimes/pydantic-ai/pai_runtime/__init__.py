"""pydantic-ai wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: a pydantic-ai Agent runs the loop with its
OpenAI chat model (pointed at WT_MODEL_BASE_URL, the model gateway) and its MCP toolset over streamable
HTTP; conversations live in its ConversationStore. It imports nothing from windtunnel.
"""

__version__ = "1.0.0"
