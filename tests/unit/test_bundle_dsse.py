"""DSSE PAE and envelopes, checked against the test vector in the DSSE spec's protocol.md."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from windtunnel._bundle.dsse import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    Signature,
    b64decode,
    envelope_from_json,
    pae,
    sign_envelope,
)
from windtunnel._bundle.keys import Signer, signature_valid
from windtunnel.errors import VerificationError

# secure-systems-lab/dsse protocol.md, "Test Vectors" (Version 1.0.0): ECDSA P-256 / SHA-256, deterministic
# RFC 6979, the signature given as raw r||s. Copied verbatim from the spec.
SPEC_PAYLOAD_TYPE = "http://example.com/HelloWorld"
SPEC_BODY = b"hello world"
SPEC_PAE = b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
SPEC_X = 46950820868899156662930047687818585632848591499744589407958293238635476079160
SPEC_Y = 5640078356564379163099075877009565129882514886557779369047442380624545832820
SPEC_D = 97358161215184420915383655311931858321456579547487070936769975997791359926199
SPEC_SIG_B64 = "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA=="
SPEC_ENVELOPE = (
    '{"payload": "aGVsbG8gd29ybGQ=", "payloadType": "http://example.com/HelloWorld", '
    f'"signatures": [{{"sig": "{SPEC_SIG_B64}"}}]}}'
)


def spec_public_key() -> ec.EllipticCurvePublicKey:
    return ec.EllipticCurvePublicNumbers(SPEC_X, SPEC_Y, ec.SECP256R1()).public_key()


def raw_to_der(raw: bytes) -> bytes:
    return encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))


def test_pae_matches_the_spec_vector() -> None:
    assert pae(SPEC_PAYLOAD_TYPE, SPEC_BODY) == SPEC_PAE


def test_the_spec_signature_verifies_over_our_pae() -> None:
    # The vector's signature was made by the reference implementation over its PAE; it verifies over
    # ours only if the bytes are identical.
    signature = raw_to_der(base64.b64decode(SPEC_SIG_B64))
    assert signature_valid(spec_public_key(), signature, pae(SPEC_PAYLOAD_TYPE, SPEC_BODY))
    assert not signature_valid(spec_public_key(), signature, pae(SPEC_PAYLOAD_TYPE, b"hello world!"))


def test_the_spec_envelope_parses_and_verifies() -> None:
    envelope = envelope_from_json(SPEC_ENVELOPE, source="spec")
    assert envelope.payload == SPEC_BODY
    assert envelope.payload_type == SPEC_PAYLOAD_TYPE
    assert envelope.signatures[0].keyid == ""
    assert signature_valid(spec_public_key(), raw_to_der(envelope.signatures[0].sig), envelope.pae())


def test_the_spec_key_is_consistent() -> None:
    private = ec.derive_private_key(SPEC_D, ec.SECP256R1())
    numbers = private.public_key().public_numbers()
    assert (numbers.x, numbers.y) == (SPEC_X, SPEC_Y)


def test_pae_counts_utf8_bytes_of_the_type() -> None:
    # From the spec text: LEN(s) is the byte length; "ä" is two bytes in UTF-8.
    assert (
        pae("application/vnd.exämple+json", b"{}") == "DSSEv1 29 application/vnd.exämple+json 2 {}".encode()
    )


def test_pae_of_an_empty_body_keeps_the_trailing_space() -> None:
    assert pae(IN_TOTO_PAYLOAD_TYPE, b"") == b"DSSEv1 28 application/vnd.in-toto+json 0 "


def test_pae_keeps_binary_bodies_byte_exact() -> None:
    body = bytes(range(256))
    assert pae("t", body) == b"DSSEv1 1 t 256 " + body


def test_both_base64_alphabets_decode() -> None:
    data = b"\xfb\xff\xbf>?"
    assert b64decode(base64.standard_b64encode(data).decode()) == data
    assert b64decode(base64.urlsafe_b64encode(data).decode()) == data
    with pytest.raises(ValueError, match="base64"):
        b64decode(None)


def test_a_signed_envelope_round_trips_and_verifies() -> None:
    signer = Signer.ephemeral()
    envelope = sign_envelope(IN_TOTO_PAYLOAD_TYPE, b'{"a":1}', signer.sign, signer.keyid)
    text = json.dumps(envelope.to_dict())
    again = envelope_from_json(text, source="test")
    assert again == envelope
    assert json.loads(text)["signatures"] == [
        {"keyid": signer.keyid, "sig": base64.b64encode(envelope.signatures[0].sig).decode()}
    ]
    assert signature_valid(signer.public_key, again.signatures[0].sig, again.pae())


def test_without_keyid_leaves_only_the_signature() -> None:
    envelope = Envelope(payload_type="t", payload=b"x", signatures=(Signature(sig=b"s", keyid="k"),))
    assert envelope.to_dict(with_keyid=False)["signatures"] == [{"sig": "cw=="}]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "is not JSON"),
        ("[]", "expected an object"),
        ('{"payload": "eA==", "signatures": []}', "payloadType"),
        ('{"payloadType": "t", "payload": "***", "signatures": []}', "payload is not base64"),
        ('{"payloadType": "t", "payload": "eA=="}', "no signatures list"),
        ('{"payloadType": "t", "payload": "eA==", "signatures": [{"sig": "%%"}]}', "sig is not base64"),
        ('{"payloadType": "t", "payload": "eA==", "signatures": [{"sig": "eA==", "keyid": 3}]}', "keyid"),
    ],
)
def test_malformed_envelopes_name_the_field(text: str, fragment: str) -> None:
    with pytest.raises(VerificationError, match=fragment) as caught:
        envelope_from_json(text, source="x.jsonl")
    assert caught.value.context["check"] == "envelope.format"
