"""The shared TLS context keeps httpx's defaults (verified certificates, hostname checks) and is built once."""

from __future__ import annotations

import ssl

from windtunnel._net.tls import shared_tls_context


def test_the_context_is_built_once() -> None:
    assert shared_tls_context() is shared_tls_context()


def test_the_context_verifies_like_httpx_does() -> None:
    context = shared_tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0
