"""The name and URL every MCP mock handle answers with: the two properties of the MCPHandle protocol."""

from __future__ import annotations


class MockIdentity:
    """An MCP mock's server name and the URL runtimes reach it at, fixed when its handle is made."""

    def __init__(self, name: str, url: str) -> None:
        self._name = name
        self._url = url

    @property
    def name(self) -> str:
        return self._name

    @property
    def url(self) -> str:
        return self._url
