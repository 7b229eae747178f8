"""Reading an HTTP answer that must be a JSON object: our own servers (gateway admin, MCP mocks) send one."""

from __future__ import annotations

from typing import Any

import httpx


def json_object(response: httpx.Response) -> dict[str, Any] | None:
    """The body as a JSON object, or None when it is not one (not JSON at all, or another JSON value)."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
