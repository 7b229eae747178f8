"""Every verb's one-line summary, in `wt --help` order: listing the verbs imports no verb module."""

from __future__ import annotations

SUMMARIES: dict[str, str] = {
    "run": "run scenarios against a runtime and grade them",
    "selftest": "run golden/poison reference cases through the live stack",
    "prove": "re-prove scenarios: negative controls, no leaked answer, grounded sources, gates that bite",
    "doctor": "bring-up diagnostics and the reset canary for one runtime",
    "certify": "certify runtimes: conformance, canary, selftest, tapes, then a signed bundle",
    "verify": "verify a signed certification bundle offline",
    "report": "render a bundle's report.html (checks, evidence and conversations) and optionally open it",
    "tapes": "list, verify, promote and re-record model-traffic tapes",
    "gateway": "serve the OpenAI-compatible model gateway",
    "mcp": "serve or list a pack's MCP mock servers",
    "images": "bootstrap the base image, build Wind Tunnel's images, sweep leftovers",
}
"""A verb lives in windtunnel._cli.cmd_<verb> (register(commands) builds its parser, its handler imports
what it runs); its summary lives here, so `wt --help` and `wt --version` import none of docker, pydantic,
httpx or cryptography. A verb module without an entry here still works: listing it imports it."""
