"""The settings every Claude Code CLI process runs with (turns and the start probe)."""

from __future__ import annotations

STDERR_LINES = 20
"""The CLI's last stderr lines kept for a failed turn's error: its own words on why it stopped."""
QUIET = {
    # Documented Claude Code settings: nothing but the model gateway and the MCP mocks is ever contacted.
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # One scripted decision is one model call: the CLI's own retries would call again after a refusal.
    "CLAUDE_CODE_MAX_RETRIES": "0",
    # ... and so would its recoveries from a 4xx it takes for an unsupported feature: it sends the request
    # again without its deferred tools (ENABLE_TOOL_SEARCH, the CLI's own hint) or without an experimental
    # beta header, one at a time (up to 6 calls for one refusal in 2.1.332).
    "ENABLE_TOOL_SEARCH": "false",
    "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1",
}
