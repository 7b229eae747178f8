"""The same signed envelope as a Sigstore bundle v0.3 (public key hint, no transparency log entries).

Field names follow sigstore/protobuf-specs `protos/sigstore_bundle.proto` in its JSON form. The DSSE
signature inside carries no keyid: sigstore-go (and so cosign) compares a non-empty keyid with its own
SSH-style fingerprint of the key and skips the signature when they differ, so an empty keyid is the form
every verifier accepts. The key is named by `verificationMaterial.publicKey.hint` (our keyid) instead.
"""

from __future__ import annotations

import json
from typing import Any

from windtunnel._bundle.dsse import Envelope, envelope_from_dict
from windtunnel.errors import VerificationError

MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"


def sigstore_bundle(envelope: Envelope, *, keyid: str) -> dict[str, Any]:
    return {
        "mediaType": MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": keyid}, "tlogEntries": []},
        "dsseEnvelope": envelope.to_dict(with_keyid=False),
    }


def check_sigstore_bundle(text: str, *, envelope: Envelope, keyid: str, source: str) -> None:
    """The Sigstore bundle must carry exactly the verified envelope and name the verifying key."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(f"{source} is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad(f"{source} is not a JSON object")
    if data.get("mediaType") != MEDIA_TYPE:
        raise _bad(f"{source} mediaType is {data.get('mediaType')!r}, expected {MEDIA_TYPE!r}")
    material = data.get("verificationMaterial")
    if not isinstance(material, dict):
        raise _bad(f"{source} has no verificationMaterial object")
    public_key = material.get("publicKey")
    hint = public_key.get("hint") if isinstance(public_key, dict) else None
    if hint != keyid:
        raise _bad(f"{source} publicKey.hint is {hint!r}, expected the keyid of the verifying key {keyid}")
    if material.get("tlogEntries") != []:
        raise _bad(f"{source} has transparency log entries; Wind Tunnel bundles are signed offline")
    raw = data.get("dsseEnvelope")
    if not isinstance(raw, dict):
        raise _bad(f"{source} has no dsseEnvelope")
    inner = envelope_from_dict(raw, source=f"{source} dsseEnvelope")
    if (inner.payload_type, inner.payload) != (envelope.payload_type, envelope.payload) or [
        s.sig for s in inner.signatures
    ] != [s.sig for s in envelope.signatures]:
        raise _bad(f"{source} carries a different envelope than the verified attestation")


def _bad(message: str) -> VerificationError:
    return VerificationError(message, check="sigstore.bundle", reason=message)
