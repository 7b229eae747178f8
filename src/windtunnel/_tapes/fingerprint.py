"""Request fingerprints: SHA-256 over a version prefix and RFC 8785 JSON of an allowlist of request parts.

Only what can change the model's answer counts: method, upstream, path, and the allowlisted body fields of
the path's dialect (windtunnel._wire), volatile parts normalised by the declared VOLATILE_RULES.
Headers never count (auth, request ids, user-agent), and neither do body fields outside the allowlist
(`user`, `metadata`, `store`: ids and bookkeeping). Secrets are redacted before hashing, the same way on
record and on replay (known patterns, plus the key values in use when the caller passes its scanner), so a
tape never has to hold a secret to match a request.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import rfc8785

from windtunnel._tapes import volatile
from windtunnel._tapes.secrets import SecretScanner, redact
from windtunnel._wire.dialect import Dialect
from windtunnel._wire.registry import CHAT, dialect_for_path

FINGERPRINT_VERSION = 1
FINGERPRINT_PREFIX = b"wt-tape-fp-v1\n"


def kept_fields(dialect: Dialect) -> frozenset[str]:
    """The body fields a fingerprint keeps for `dialect`: its own, and its sampling keys (sampling changes
    what an upstream answers)."""
    return dialect.fingerprint_fields | dialect.sampling_keys


BODY_FIELDS: frozenset[str] = kept_fields(CHAT)
"""Chat's body fields that take part in the fingerprint (sampling and limits: the very fields the gateway
logs, so a log rebuilds the body); every other body field is dropped before recording. Each dialect
declares its own (windtunnel._wire): Anthropic keeps `system`, Responses `instructions` and `input`."""

VOLATILE_RULES = volatile.CURRENT
"""The rule set (windtunnel._tapes.volatile) that normalises fields that change between identical runs before
a Messages or Responses request is hashed; a tape names the set it was hashed with. Chat requests have none
(their fingerprints are those of version 1 unchanged); per-session ids (`metadata.user_id`,
`prompt_cache_key`, `user`, `store`) are outside every dialect's allowlist already."""

# rfc8785 refuses integers JSON cannot carry exactly (I-JSON); they are hashed as tagged strings.
_MAX_SAFE_INT = 2**53 - 1


def normalize_upstream(url: str) -> str:
    """The upstream as a label: scheme and host lower-cased, no credentials, query or trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


def request_parts(
    method: str,
    upstream: str,
    path: str,
    body: Mapping[str, Any],
    *,
    scanner: SecretScanner | None = None,
    rules: str = VOLATILE_RULES,
) -> dict[str, Any]:
    """The fingerprinted view of a request, exactly as a tape stores it; `rules` names the volatile-field
    rule set (a replay passes its tape's, so a tape hashed under an older set still matches).

    `scanner` also redacts the key values in use; record and replay must pass scanners that know the same
    keys, or a request holding a key would hash differently on the two sides (known patterns always go).
    """
    route = urlsplit(path).path
    fields = kept_fields(dialect_for_path(route))
    kept = {key: body[key] for key in sorted(fields) if key in body}
    parts = {
        "method": method.upper(),
        "upstream": normalize_upstream(upstream),
        "path": route,
        "body": kept if dialect_for_path(route) is CHAT else volatile.normalised(kept, rules),
    }
    redacted: dict[str, Any] = scanner.redact(parts) if scanner is not None else redact(parts)
    return redacted


def fingerprint(parts: Mapping[str, Any]) -> str:
    """SHA-256 hex of the version prefix plus the canonical JSON of `parts` (from request_parts)."""
    payload = {
        "method": parts["method"],
        "upstream": parts["upstream"],
        "path": parts["path"],
        "body": parts["body"],
    }
    try:
        canonical = rfc8785.dumps(payload)
    except rfc8785.CanonicalizationError:
        # Rare: integers beyond 2**53 or NaN/Infinity, which I-JSON cannot carry; hash them as tagged strings.
        canonical = rfc8785.dumps({**payload, "body": _ijson(payload["body"])})
    return hashlib.sha256(FINGERPRINT_PREFIX + canonical).hexdigest()


def _ijson(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and abs(value) > _MAX_SAFE_INT:
        return f"wt:int:{value}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"wt:float:{value}"
    if isinstance(value, Mapping):
        return {str(key): _ijson(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_ijson(item) for item in value]
    return value
