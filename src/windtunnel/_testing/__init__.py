"""testcontainers classes and pytest fixtures for testing a runtime against the real gateway and mocks
(the public door is windtunnel.testing; docs/testing.md)."""
