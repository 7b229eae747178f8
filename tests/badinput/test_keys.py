"""Bad keys: a verification key for `wt verify --key`, a signing key for `wt certify --key` or
WT_SIGNING_KEY. Each is a one-line usage error (exit 2) naming the key and how to make a good one; certify
stops before any stage (no engine is needed to get there)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from tests.badinput.runner import Case, Setup, run_case
from tests.unit.test_bundle_samples import write_sample
from windtunnel._bundle import Signer, seal_bundle

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
PKCS8 = serialization.PrivateFormat.PKCS8
SPKI = serialization.PublicFormat.SubjectPublicKeyInfo
PEM = serialization.Encoding.PEM


def private_pem(
    key: object, fmt: serialization.PrivateFormat = PKCS8, password: bytes | None = None
) -> bytes:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(PEM, fmt, encryption)  # type: ignore[attr-defined,no-any-return]


def public_pem(key: object) -> bytes:
    return key.public_key().public_bytes(PEM, SPKI)  # type: ignore[attr-defined,no-any-return]


P256 = ec.generate_private_key(ec.SECP256R1())
P384 = ec.generate_private_key(ec.SECP384R1())
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ED = ed25519.Ed25519PrivateKey.generate()

KEY_FILES: dict[str, bytes] = {
    "empty": b"",
    "garbage": b"not a key at all\n",
    "binary": bytes(range(256)),
    "truncated pem": public_pem(P256)[:60],
    "rsa public": public_pem(RSA),
    "p384 public": public_pem(P384),
    "ed25519 public": public_pem(ED),
    "private instead of public": private_pem(P256),
    "der public": P256.public_key().public_bytes(serialization.Encoding.DER, SPKI),
    "certificate header": b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
}

SIGNING_KEYS: dict[str, bytes] = {
    "empty": b"",
    "garbage": b"hello\n",
    "public key": public_pem(P256),
    "sec1 ec key": private_pem(P256, serialization.PrivateFormat.TraditionalOpenSSL),
    "encrypted pkcs8": private_pem(P256, password=b"secret-passphrase"),
    "rsa pkcs8": private_pem(RSA),
    "p384 pkcs8": private_pem(P384),
    "ed25519 pkcs8": private_pem(ED),
    "truncated pkcs8": private_pem(P256)[:80],
    "pkcs8 header, body garbage": b"-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n",
}


def writes(name: str, data: bytes) -> Setup:
    def setup(tmp: Path) -> None:
        (tmp / name).write_bytes(data)
        bundle = tmp / "bundle"
        if not bundle.exists():
            bundle.mkdir()
            signer = Signer.ephemeral()
            write_sample(bundle, origin=signer.origin)
            seal_bundle(bundle, signer=signer)

    return setup


VERIFY = [
    Case(
        f"verify key {name}",
        ["verify", "{tmp}/bundle", "--key", "{tmp}/key.pem"],
        2,
        "key.pem",
        writes("key.pem", data),
    )
    for name, data in KEY_FILES.items()
]
VERIFY += [
    Case(
        "verify key missing",
        ["verify", "{tmp}/bundle", "--key", "{tmp}/absent.pem"],
        2,
        "cannot read the public key",
        writes("x", b""),
    ),
    Case(
        "verify key is a directory",
        ["verify", "{tmp}/bundle", "--key", "{tmp}"],
        2,
        "cannot read the public key",
        writes("x", b""),
    ),
]

CERTIFY = [
    Case(
        f"certify key {name}",
        ["certify", "--out", "{tmp}/out", "--key", "{tmp}/signing.pem"],
        2,
        "signing key",
        writes("signing.pem", data),
        env=NO_ENGINE,
    )
    for name, data in SIGNING_KEYS.items()
]
CERTIFY += [
    Case(
        "certify key missing",
        ["certify", "--out", "{tmp}/out", "--key", "{tmp}/absent.pem"],
        2,
        "cannot read the signing key",
        env=NO_ENGINE,
    ),
    Case(
        "certify env key garbage",
        ["certify", "--out", "{tmp}/out"],
        2,
        "WT_SIGNING_KEY",
        env={**NO_ENGINE, "WT_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
    ),
    Case(
        "certify env key public",
        ["certify", "--out", "{tmp}/out"],
        2,
        "WT_SIGNING_KEY is not an unencrypted PKCS#8 PEM private key",
        env={**NO_ENGINE, "WT_SIGNING_KEY": public_pem(P256).decode()},
    ),
]

CASES = VERIFY + CERTIFY


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_key_is_one_clear_line(case: Case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    outcome.refused(case.code, case.expect)
    assert "wt certify: " not in outcome.stderr or ": build" not in outcome.stderr  # no stage ran
