"""The model gateway: an OpenAI-compatible server every model call of a containerised runtime goes through."""
