"""The model APIs' wire formats (dialects) the gateway speaks: OpenAI chat, Anthropic Messages, OpenAI Responses."""
