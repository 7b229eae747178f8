"""pydantic-ai wrapped in Contract C v1 (see ../README.md).

A standalone service, as a third-party platform would ship one: a pydantic-ai Agent runs the loop with its
OpenAI chat model (pointed at WT_MODEL_BASE_URL, the model gateway) and its MCP toolset over streamable
HTTP; conversations live in its ConversationStore. The Contract C server around the loop is the
windtunnel-inject library; nothing here imports windtunnel.
"""

import os

# Before FastMCP (the SDK's MCP client) is imported: it never asks PyPI for news, since the runtime under
# test must talk to nothing but the gateway and its MCP mocks.
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

__version__ = "1.0.0"
