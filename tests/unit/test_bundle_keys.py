"""Signing keys: PKCS#8 P-256 only, keyid = SHA-256 of the DER SubjectPublicKeyInfo, dev keys marked."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from windtunnel._bundle.errors import SigningKeyError
from windtunnel._bundle.keys import (
    KeyOrigin,
    Signer,
    fingerprint_of,
    keyid_of,
    load_public_key,
    load_signer,
    parse_fingerprint,
    signature_valid,
)
from windtunnel.errors import UsageError


def pkcs8(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def p256() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def test_a_pkcs8_p256_key_is_a_provided_key() -> None:
    key = p256()
    signer = Signer.from_pem(pkcs8(key))
    assert signer.origin is KeyOrigin.PROVIDED
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert signer.keyid == hashlib.sha256(der).hexdigest()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")
def test_keyid_matches_openssl(tmp_path: Path) -> None:
    signer = Signer.ephemeral()
    (tmp_path / "pub.pem").write_bytes(signer.public_pem)
    der = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", str(tmp_path / "pub.pem"), "-outform", "DER"],
        check=True,
        capture_output=True,
    ).stdout
    assert signer.keyid == hashlib.sha256(der).hexdigest()


def test_signatures_are_der_ecdsa_over_sha256() -> None:
    signer = Signer.ephemeral()
    signature = signer.sign(b"data")
    assert signature[0] == 0x30  # a DER SEQUENCE, not raw r||s
    signer.public_key.verify(signature, b"data", ec.ECDSA(hashes.SHA256()))
    assert signature_valid(signer.public_key, signature, b"data")
    assert not signature_valid(signer.public_key, signature, b"datA")
    assert not signature_valid(signer.public_key, b"\x00" * 64, b"data")


def test_ephemeral_keys_are_dev_keys_and_fresh() -> None:
    one, two = Signer.ephemeral(), Signer.ephemeral()
    assert one.origin is KeyOrigin.DEV
    assert one.keyid != two.keyid


def test_the_repr_never_shows_the_private_key() -> None:
    key = p256()
    text = repr(Signer.from_pem(pkcs8(key)))
    assert "PRIVATE" not in text
    assert str(key.private_numbers().private_value) not in text


def test_a_sec1_key_is_refused_with_the_conversion_command() -> None:
    sec1 = p256().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    with pytest.raises(SigningKeyError, match="PKCS#8") as caught:
        Signer.from_pem(sec1)
    assert "openssl pkcs8 -topk8" in str(caught.value)
    assert isinstance(caught.value, UsageError)


def test_an_encrypted_key_is_refused() -> None:
    encrypted = p256().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )
    with pytest.raises(SigningKeyError, match="unencrypted PKCS#8"):
        Signer.from_pem(encrypted)


def test_other_curves_and_algorithms_are_refused() -> None:
    with pytest.raises(SigningKeyError, match="secp384r1 key, expected ECDSA P-256"):
        Signer.from_pem(pkcs8(ec.generate_private_key(ec.SECP384R1())))
    with pytest.raises(SigningKeyError, match="RSAPrivateKey key"):
        Signer.from_pem(pkcs8(rsa.generate_private_key(public_exponent=65537, key_size=2048)))


def test_garbage_under_a_pkcs8_header_is_refused() -> None:
    with pytest.raises(SigningKeyError, match="could not be loaded"):
        Signer.from_pem(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", source="WT_SIGNING_KEY"
        )


def test_load_signer_prefers_the_file_then_the_env_text(tmp_path: Path) -> None:
    file_key, env_key = p256(), p256()
    path = tmp_path / "signing.pem"
    path.write_bytes(pkcs8(file_key))
    env_text = pkcs8(env_key).decode()
    assert load_signer(key_path=path, key_pem=env_text).keyid == Signer.from_pem(pkcs8(file_key)).keyid
    assert load_signer(key_pem=env_text).keyid == Signer.from_pem(env_text).keyid
    assert load_signer().origin is KeyOrigin.DEV
    assert load_signer(key_pem="  \n").origin is KeyOrigin.DEV


def test_a_missing_key_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SigningKeyError, match="cannot read the signing key") as caught:
        load_signer(key_path=tmp_path / "absent.pem")
    assert caught.value.context["path"] == str(tmp_path / "absent.pem")


def test_public_keys_must_be_p256_pem() -> None:
    signer = Signer.ephemeral()
    assert load_public_key(signer.public_pem).public_numbers() == signer.public_key.public_numbers()
    with pytest.raises(SigningKeyError, match="not a PEM public key"):
        load_public_key(b"hello")
    rsa_pub = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(SigningKeyError, match="expected an ECDSA P-256 public key"):
        load_public_key(rsa_pub)


def test_the_test_fixture_signer_has_the_fingerprint_nox_pins() -> None:
    """noxfile.py's certify session pins this fingerprint; it must stay the fixture key's."""
    repo = Path(__file__).resolve().parents[2]
    public = load_public_key((repo / "tests/fixtures/keys/test-signer.pub.pem").read_bytes())
    private = load_signer(key_path=repo / "tests/fixtures/keys/test-signer.pem")
    fingerprint = fingerprint_of(keyid_of(public))
    assert private.keyid == keyid_of(public)
    assert f'TEST_SIGNER_FINGERPRINT = "{fingerprint}"' in (repo / "noxfile.py").read_text()
    assert parse_fingerprint(fingerprint) == keyid_of(public)
