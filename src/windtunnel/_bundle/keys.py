"""Signing keys: ECDSA P-256 from PKCS#8 PEM (a file or the WT_SIGNING_KEY text) or an ephemeral dev key.

keyid = hex SHA-256 of the DER SubjectPublicKeyInfo (RFC 6962 section 3.2 style, the form the Sigstore
bundle spec recommends for a public key hint); its fingerprint, what a verifier pins, is the same digest
written `SHA256:<64 hex>` (`SHA256:<base64>` of the digest, with or without padding, is accepted too).
Signatures are DER ECDSA over SHA-256 of the signed bytes.
Nothing here reads the environment: callers pass the path or the PEM text they were given.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from windtunnel._bundle.canonical import sha256_hex
from windtunnel._bundle.errors import SigningKeyError
from windtunnel._files import os_error_as

_PKCS8_HEADER = b"-----BEGIN PRIVATE KEY-----"
_CONVERT_HINT = (
    "make one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signing.pem`, "
    "or convert a SEC1 key with `openssl pkcs8 -topk8 -nocrypt -in key.pem -out signing.pem`"
)


class KeyOrigin(StrEnum):
    """Where the signing key came from; a dev key proves consistency, never who signed."""

    PROVIDED = "provided key"
    DEV = "unverified dev key"


@dataclass(frozen=True, slots=True)
class Signer:
    """A P-256 private key that signs; build it with from_pem, ephemeral or load_signer."""

    _key: ec.EllipticCurvePrivateKey
    origin: KeyOrigin

    @classmethod
    def from_pem(cls, pem: bytes | str, *, source: str = "the signing key") -> Signer:
        data = pem.encode("utf-8") if isinstance(pem, str) else pem
        if _PKCS8_HEADER not in data:
            raise SigningKeyError(
                f"{source} is not an unencrypted PKCS#8 PEM private key (no '{_PKCS8_HEADER.decode()}' line)",
                hint=_CONVERT_HINT,
            )
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise SigningKeyError(
                f"{source} could not be loaded: {_first_sentence(exc)}", hint=_CONVERT_HINT
            ) from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
            found = key.curve.name if isinstance(key, ec.EllipticCurvePrivateKey) else type(key).__name__
            raise SigningKeyError(
                f"{source} is a {found} key, expected ECDSA P-256 (secp256r1)", hint=_CONVERT_HINT
            )
        return cls(key, KeyOrigin.PROVIDED)

    @classmethod
    def ephemeral(cls) -> Signer:
        """A fresh key that lives only in memory; bundles it signs say 'unverified dev key'."""
        return cls(ec.generate_private_key(ec.SECP256R1()), KeyOrigin.DEV)

    @property
    def public_key(self) -> ec.EllipticCurvePublicKey:
        return self._key.public_key()

    @property
    def keyid(self) -> str:
        return keyid_of(self.public_key)

    @property
    def public_pem(self) -> bytes:
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def sign(self, data: bytes) -> bytes:
        """DER-encoded ECDSA signature over SHA-256(data)."""
        return self._key.sign(data, ec.ECDSA(hashes.SHA256()))

    def __repr__(self) -> str:
        # The private key never appears in reprs, logs or tracebacks.
        return f"Signer(keyid={self.keyid[:16]}..., origin={self.origin.value!r})"


def load_signer(*, key_path: Path | None = None, key_pem: str | None = None) -> Signer:
    """The signer for a run: a key file wins over PEM text (WT_SIGNING_KEY); neither gives a dev key."""
    if key_path is not None:
        fix = "pass --key with the path of a PKCS#8 PEM file, or set WT_SIGNING_KEY to its text"
        with os_error_as(SigningKeyError, f"cannot read the signing key {key_path}", key_path, hint=fix):
            data = key_path.read_bytes()
        return Signer.from_pem(data, source=f"signing key {key_path}")
    if key_pem is not None and key_pem.strip():
        return Signer.from_pem(key_pem, source="WT_SIGNING_KEY")
    return Signer.ephemeral()


def keyid_of(public_key: ec.EllipticCurvePublicKey) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return sha256_hex(der)


FINGERPRINT_PREFIX = "SHA256:"


def fingerprint_of(keyid: str) -> str:
    """The fingerprint certify prints and a verifier pins: `SHA256:` + the hex keyid."""
    return f"{FINGERPRINT_PREFIX}{keyid}"


def parse_fingerprint(text: str) -> str:
    """The keyid (64 lowercase hex) a `SHA256:<hex>` or `SHA256:<base64>` fingerprint pins."""
    prefix, _, value = text.strip().partition(":")
    digest: bytes | None = None
    if prefix.upper() == FINGERPRINT_PREFIX[:-1] and value:
        if len(value) == 64 and all(c in "0123456789abcdefABCDEF" for c in value):
            digest = bytes.fromhex(value)
        else:
            try:
                digest = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
            except binascii.Error:
                digest = None
    if digest is None or len(digest) != 32:
        raise SigningKeyError(
            f"--key-fingerprint {text!r} is not a SHA-256 key fingerprint",
            hint="pass SHA256:<64 hex digits> as `wt certify` prints it (the SHA-256 of the key's DER "
            "SubjectPublicKeyInfo: `openssl pkey -pubin -in signer.pub.pem -outform DER | sha256sum`)",
            field="--key-fingerprint",
        )
    return digest.hex()


def load_public_key(pem: bytes, *, source: str = "the public key") -> ec.EllipticCurvePublicKey:
    """A P-256 public key from SubjectPublicKeyInfo PEM; anything else is a SigningKeyError."""
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise SigningKeyError(
            f"{source} is not a PEM public key ({_first_sentence(exc)})",
            hint=_PUBLIC_HINT,
        ) from exc
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        found = f"{key.curve.name} EC" if isinstance(key, ec.EllipticCurvePublicKey) else type(key).__name__
        raise SigningKeyError(
            f"{source} is a {found.removesuffix('PublicKey')} key, expected an ECDSA P-256 public key",
            hint=f"Wind Tunnel bundles are signed with ECDSA P-256; {_PUBLIC_HINT}",
        )
    return key


_PUBLIC_HINT = (
    "pass the signer's public key (PEM SubjectPublicKeyInfo, `openssl pkey -in signing.pem -pubout`) from "
    "your own store, or pin it with --key-fingerprint SHA256:..."
)


def _first_sentence(exc: Exception) -> str:
    """cryptography's message up to its first full stop: the rest is a link to its FAQ."""
    return str(exc).split(". ")[0].rstrip(".")


def signature_valid(public_key: ec.EllipticCurvePublicKey, signature: bytes, data: bytes) -> bool:
    try:
        public_key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True
