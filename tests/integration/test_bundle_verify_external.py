"""A sealed bundle checked by implementations that are not ours: securesystemslib (DSSE), the openssl CLI
(ECDSA over the PAE) and sigstore-js `@sigstore/verify` (the Sigstore bundle v0.3, in Node).

The Node check installs `@sigstore/verify` with npm into a temporary directory (the release line that
supports the installed Node: Debian bookworm ships Node 18) and skips, saying why, when the registry is
unavailable; without node and npm it skips, except under CI, which installs them (.ci/run), where it fails. cosign cannot be downloaded here; docs/bundle.md explains
why the bundle is shaped for it (no keyid in the Sigstore bundle's envelope, our predicate type as --type).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError as SslibVerificationError

# securesystemslib.signer re-exports these without __all__, which mypy --strict reads as private.
from securesystemslib.signer import CryptoSigner, SSlibKey  # type: ignore[attr-defined]

from tests.unit.test_bundle_samples import NOW, write_sample
from windtunnel._bundle import Signer, seal_bundle
from windtunnel._bundle.dsse import pae
from windtunnel._bundle.keys import signature_valid

ATTESTATION = "attestations/certification.intoto.jsonl"
SIGSTORE = "attestations/certification.sigstore.json"
SIGSTORE_PACKAGES = {
    "current": ("@sigstore/verify@3.1.1", "@sigstore/bundle@4.0.0"),  # engines: node ^20.17 || >=22.9
    "node18": ("@sigstore/verify@2.1.1", "@sigstore/bundle@3.1.0"),  # engines: node ^18.17 || >=20.5
}
"""The same verifier API (Verifier, toSignedEntity, toTrustMaterial) in both lines."""


def sigstore_packages(node_version: str) -> tuple[str, str]:
    """The @sigstore/verify release line whose engines admit this Node (`v20.20.2` -> current)."""
    major, minor = (int(part) for part in node_version.strip().lstrip("v").split(".")[:2])
    current = major >= 23 or (major == 22 and minor >= 9) or (major == 20 and minor >= 17)
    return SIGSTORE_PACKAGES["current" if current else "node18"]


@pytest.fixture(scope="module")
def signer() -> Signer:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Signer.from_pem(pem)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory, signer: Signer) -> Path:
    root = tmp_path_factory.mktemp("external") / "bundle"
    root.mkdir()
    write_sample(root)
    seal_bundle(root, signer=signer, now=NOW)
    return root


def envelope_dict(root: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((root / ATTESTATION).read_text())
    return loaded


# securesystemslib ---------------------------------------------------------------------------------


def sslib_key(signer: Signer) -> SSlibKey:
    return SSlibKey.from_crypto(signer.public_key, keyid=signer.keyid, scheme="ecdsa-sha2-nistp256")


def test_securesystemslib_verifies_the_envelope(sealed: Path, signer: Signer) -> None:
    envelope = Envelope.from_dict(envelope_dict(sealed))
    accepted = envelope.verify([sslib_key(signer)], 1)
    assert list(accepted) == [signer.keyid]
    assert envelope.payload_type == "application/vnd.in-toto+json"
    assert envelope.pae() == pae(envelope.payload_type, envelope.payload)


def test_securesystemslib_rejects_a_flipped_payload_byte(sealed: Path, signer: Signer) -> None:
    data = envelope_dict(sealed)
    payload = bytearray(base64.b64decode(str(data["payload"])))
    payload[10] ^= 0x20
    data["payload"] = base64.b64encode(bytes(payload)).decode()
    with pytest.raises(SslibVerificationError):
        Envelope.from_dict(data).verify([sslib_key(signer)], 1)


def test_securesystemslib_signatures_verify_with_ours(signer: Signer) -> None:
    # The other direction: an envelope signed by securesystemslib verifies over our PAE.
    private = ec.generate_private_key(ec.SECP256R1())
    theirs = CryptoSigner(private)
    envelope = Envelope(payload=b'{"x":1}', payload_type="application/vnd.in-toto+json", signatures={})
    signature = envelope.sign(theirs)
    assert signature_valid(
        private.public_key(), bytes.fromhex(signature.signature), pae(envelope.payload_type, envelope.payload)
    )


# openssl ------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")
def test_openssl_verifies_the_signature_over_the_pae(sealed: Path, tmp_path: Path) -> None:
    data = envelope_dict(sealed)
    payload = base64.b64decode(str(data["payload"]))
    signatures = data["signatures"]
    assert isinstance(signatures, list)
    (tmp_path / "pae.bin").write_bytes(pae(str(data["payloadType"]), payload))
    (tmp_path / "sig.der").write_bytes(base64.b64decode(signatures[0]["sig"]))
    done = subprocess.run(
        [
            "openssl", "dgst", "-sha256",
            "-verify", str(sealed / "keys/signer.pub.pem"),
            "-signature", str(tmp_path / "sig.der"),
            str(tmp_path / "pae.bin"),
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verified OK" in done.stdout


# @sigstore/verify ---------------------------------------------------------------------------------

NODE_SCRIPT = r"""
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { bundleFromJSON } = require('@sigstore/bundle');
const { toSignedEntity, toTrustMaterial, Verifier } = require('@sigstore/verify');

const [bundleDir, keyPath, sigstorePath] = process.argv.slice(2);
const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(path.join(bundleDir, sigstorePath), 'utf8')));
const spki = crypto.createPublicKey(fs.readFileSync(keyPath)).export({ format: 'der', type: 'spki' });
const keyid = crypto.createHash('sha256').update(spki).digest('hex');
const emptyRoot = { mediaType: '', tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] };
// The key finder is keyed by OUR keyid: the bundle's publicKey.hint must equal it.
const trust = toTrustMaterial(emptyRoot, { [keyid]: { rawBytes: spki, keyDetails: 0, validFor: undefined } });
const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
verifier.verify(toSignedEntity(bundle));

const env = bundle.content.dsseEnvelope;
const statement = JSON.parse(env.payload.toString('utf8'));
let files = 0;
for (const subject of statement.subject) {
  if (subject.name.startsWith('image:')) continue;
  const digest = crypto.createHash('sha256').update(fs.readFileSync(path.join(bundleDir, subject.name))).digest('hex');
  if (digest !== subject.digest.sha256) throw new Error('digest mismatch for ' + subject.name);
  files += 1;
}
console.log(JSON.stringify({ ok: true, payloadType: env.payloadType, predicateType: statement.predicateType, files, keyid }));
"""


@pytest.fixture(scope="module")
def sigstore_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs node and npm (.ci/run) for @sigstore/verify")
        pytest.skip("node and npm are needed to run @sigstore/verify")
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    workdir = tmp_path_factory.mktemp("sigstore-js")
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", *sigstore_packages(version)],
            cwd=workdir, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip("npm install of @sigstore/verify timed out (registry unreachable?)")
    if done.returncode != 0:
        pytest.skip(
            f"npm install of @sigstore/verify failed (registry unreachable?): {done.stderr.strip()[-300:]}"
        )
    (workdir / "verify.js").write_text(NODE_SCRIPT)
    return workdir


def run_node(workdir: Path, bundle: Path, key: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(workdir / "verify.js"), str(bundle), str(key), SIGSTORE],
        cwd=workdir, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_sigstore_js_verifies_the_sigstore_bundle(sigstore_js: Path, sealed: Path, signer: Signer) -> None:
    done = run_node(sigstore_js, sealed, sealed / "keys/signer.pub.pem")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True
    assert result["keyid"] == signer.keyid
    assert result["payloadType"] == "application/vnd.in-toto+json"
    assert result["predicateType"] == "https://windtunnel.dev/certification/v1"
    expected = sum(
        1
        for p in sealed.rglob("*")
        if p.is_file() and not p.relative_to(sealed).as_posix().startswith("attestations/")
    )
    assert result["files"] == expected


@pytest.mark.slow
def test_sigstore_js_rejects_another_key(sigstore_js: Path, sealed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.pub.pem"
    other_signer = Signer.ephemeral()
    other.write_bytes(other_signer.public_pem)
    done = run_node(sigstore_js, sealed, other)
    assert done.returncode != 0
    # The hint names our key, so sigstore-js does not even find the other one.
    assert "key not found" in done.stderr or "signature verification failed" in done.stderr


@pytest.mark.slow
def test_sigstore_js_rejects_a_tampered_payload(sigstore_js: Path, sealed: Path, tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(sealed, copy)
    data = json.loads((copy / SIGSTORE).read_text())
    payload = bytearray(base64.b64decode(data["dsseEnvelope"]["payload"]))
    payload[12] ^= 0x01
    data["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    (copy / SIGSTORE).write_text(json.dumps(data))
    done = run_node(sigstore_js, copy, copy / "keys/signer.pub.pem")
    assert done.returncode != 0
    assert "signature verification failed" in done.stderr


@pytest.mark.parametrize(
    ("version", "line"),
    [("v18.19.0", "node18"), ("v20.11.1", "node18"), ("v20.17.0", "current"), ("v22.9.0", "current")],
)
def test_the_sigstore_release_line_follows_the_node_version(version: str, line: str) -> None:
    assert sigstore_packages(version) == SIGSTORE_PACKAGES[line]


def test_node_sees_the_same_keyid_rule(signer: Signer) -> None:
    # Guard for the script above: our keyid is the hex SHA-256 of the DER SubjectPublicKeyInfo.
    der = signer.public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert hashlib.sha256(der).hexdigest() == signer.keyid
