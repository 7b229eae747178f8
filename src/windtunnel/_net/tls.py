"""One TLS context for every httpx client the harness makes, built once instead of per client."""

from __future__ import annotations

import ssl
from functools import cache

import certifi


@cache
def shared_tls_context() -> ssl.SSLContext:
    """httpx's own default (certifi's CA bundle, hostname checks on), made once per process.

    httpx builds a fresh context for every client (~30 ms of CPU loading the CA bundle), and the harness
    makes a client per readiness probe, per MCP handle and per runtime handle: a certify run made ~100.
    Most talk plain HTTP on loopback or a run network, where TLS is never used, but sharing keeps the
    defaults identical for the rare https URL.
    """
    return ssl.create_default_context(cafile=certifi.where())
