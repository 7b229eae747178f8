"""Canonical JSON (RFC 8785) and the SHA-256 helpers every signed byte goes through."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import rfc8785

_CHUNK = 1 << 20


def canonical_json(value: Any) -> bytes:
    """RFC 8785 bytes of `value`: the exact bytes that get signed and hashed."""
    return rfc8785.dumps(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_sha256_hex(value: object) -> bool:
    """A lowercase 64-digit hex string, the only digest spelling the statement uses."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
