"""DSSE v1: the pre-authentication encoding, and the JSON envelope that carries a payload and its signatures.

Spec: https://github.com/secure-systems-lab/dsse (protocol.md, envelope.md). A signature covers
PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes, ASCII decimal.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from windtunnel.errors import VerificationError

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding; LEN counts the UTF-8 bytes of the type, not its characters."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


def b64encode(data: bytes) -> str:
    return base64.standard_b64encode(data).decode("ascii")


def b64decode(text: object) -> bytes:
    """Standard or URL-safe base64, both of which DSSE verifiers must accept; raises ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"expected a base64 string, found {type(text).__name__}")
    raw = text.encode("ascii", errors="strict")
    try:
        return base64.b64decode(raw, validate=True)
    except binascii.Error:
        return base64.b64decode(raw, altchars=b"-_", validate=True)


@dataclass(frozen=True, slots=True)
class Signature:
    sig: bytes
    keyid: str = ""


@dataclass(frozen=True, slots=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def pae(self) -> bytes:
        return pae(self.payload_type, self.payload)

    def to_dict(self, *, with_keyid: bool = True) -> dict[str, Any]:
        """The DSSE JSON envelope; `with_keyid=False` leaves the unauthenticated keyid hint out."""
        signatures = []
        for signature in self.signatures:
            entry: dict[str, str] = {}
            if with_keyid and signature.keyid:
                entry["keyid"] = signature.keyid
            entry["sig"] = b64encode(signature.sig)
            signatures.append(entry)
        return {
            "payloadType": self.payload_type,
            "payload": b64encode(self.payload),
            "signatures": signatures,
        }


def sign_envelope(payload_type: str, payload: bytes, sign: Callable[[bytes], bytes], keyid: str) -> Envelope:
    """One signature by `sign` over the PAE of the payload."""
    signature = Signature(sig=sign(pae(payload_type, payload)), keyid=keyid)
    return Envelope(payload_type=payload_type, payload=payload, signatures=(signature,))


def envelope_from_json(text: str | bytes, *, source: str) -> Envelope:
    """Parse a JSON envelope; anything malformed is a VerificationError naming `source` and the field."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(source, f"is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad(source, f"holds a JSON {type(data).__name__}, expected an object")
    return envelope_from_dict(data, source=source)


def envelope_from_dict(data: dict[str, Any], *, source: str) -> Envelope:
    payload_type = data.get("payloadType")
    if not isinstance(payload_type, str):
        raise _bad(source, "has no string payloadType")
    try:
        payload = b64decode(data.get("payload"))
    except ValueError as exc:
        raise _bad(source, f"payload is not base64 ({exc})") from exc
    raw_signatures = data.get("signatures")
    if not isinstance(raw_signatures, list):
        raise _bad(source, "has no signatures list")
    signatures = tuple(_signature(item, source, index) for index, item in enumerate(raw_signatures))
    return Envelope(payload_type=payload_type, payload=payload, signatures=signatures)


def _signature(item: object, source: str, index: int) -> Signature:
    if not isinstance(item, dict):
        raise _bad(source, f"signatures[{index}] is not an object")
    keyid = item.get("keyid", "")
    if not isinstance(keyid, str):
        raise _bad(source, f"signatures[{index}].keyid is not a string")
    try:
        sig = b64decode(item.get("sig"))
    except ValueError as exc:
        raise _bad(source, f"signatures[{index}].sig is not base64 ({exc})") from exc
    return Signature(sig=sig, keyid=keyid)


def _bad(source: str, what: str) -> VerificationError:
    message = f"{source} {what}: expected a DSSE JSON envelope"
    return VerificationError(message, check="envelope.format", reason=message)
