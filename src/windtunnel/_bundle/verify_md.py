"""VERIFY.md: how anyone checks a bundle offline, with Wind Tunnel or with cosign."""

from __future__ import annotations

from windtunnel._bundle import layout
from windtunnel._bundle.keys import KeyOrigin, fingerprint_of
from windtunnel._bundle.statement import PREDICATE_TYPE

_TEMPLATE = """\
# Verifying this certification bundle

Signed by key `{fingerprint}` ({origin}).{dev_note}

That is the key's fingerprint: the SHA-256 of its DER SubjectPublicKeyInfo, in hex (`wt certify` prints
it as `signer:`). The key in `{layout.PUBLIC_KEY}` came with the bundle, so checking against it only proves the
bundle is intact and self-consistent: whoever changed the bundle could have re-signed it and swapped that
key too. To know *who* signed it, pin the signer: take the fingerprint (or the public key) from the
signer, never from this bundle, and verify against it.

## With Wind Tunnel

From this directory (or pass the `.tar.gz` instead of `.`):

```
wt verify . --key-fingerprint {fingerprint}
wt verify . --key /path/to/your/copy/of/the/signer.pub.pem
```

Exit 0: valid. Exit 1: invalid, with the first reason. Exit 2: the bundle, key or fingerprint could not
be read. It checks, in order: that the key has the pinned fingerprint (`--key-fingerprint`), one DSSE
signature by the key over an in-toto Statement v1, every subject digest against the files (no file added,
none missing), `{layout.MANIFEST}`, agreement between `{layout.CHECKS}`, `{layout.JUNIT}` and `{layout.VERDICT}`, tape ages at run
time (30 days at most; tapes recorded from the scripted upstream are exempt), that no credential is in
any file, and that no file holds a home-directory path or the verifying machine's user or host name.

## With cosign (offline, no transparency log)

cosign takes a key file: first check that `{layout.PUBLIC_KEY}` is the signer's (`openssl pkey -pubin -in
{layout.PUBLIC_KEY} -outform DER | sha256sum` must print the fingerprint's hex digits), or use your own copy.
cosign checks the signature and that the file you name is a subject of the statement; run it from this
directory for any file listed in `{layout.MANIFEST}` (here `{layout.VERDICT}`):

```
cosign verify-blob-attestation --key {layout.PUBLIC_KEY} --insecure-ignore-tlog \\
  --bundle {layout.SIGSTORE_BUNDLE} \\
  --type {predicate_type} {layout.VERDICT}
```

That is cosign v3 (Sigstore bundle format by default); with cosign v2.4 or later add `--new-bundle-format`.
The plain DSSE envelope works with cosign v2 and v3 alike:

```
cosign verify-blob-attestation --key {layout.PUBLIC_KEY} --insecure-ignore-tlog \\
  --signature {layout.ATTESTATION} \\
  --type {predicate_type} {layout.VERDICT}
```

cosign does not read `{layout.MANIFEST}` nor compare the result files with each other; `sha256sum -c {layout.MANIFEST}`
checks the file digests, and `wt verify` does everything above.

## What is signed

`{layout.ATTESTATION}` holds one DSSE envelope (payloadType `application/vnd.in-toto+json`) whose payload is an
in-toto Statement v1 with predicateType `{predicate_type}`. Its subjects are every file of this directory
except the two files under `attestations/`, plus `image:<name>` for each container image the run used.
`{layout.SIGSTORE_BUNDLE}` is the same signature as a Sigstore bundle v0.3 (public key hint, no transparency log).
"""


def verify_md(*, keyid: str, origin: KeyOrigin) -> str:
    dev_note = (
        "\n\n**Unverified dev key**: no signing key was configured, so an ephemeral key was made for this run "
        "and thrown away. The bundle is tamper-evident but says nothing about who produced it."
        if origin is KeyOrigin.DEV
        else ""
    )
    return _TEMPLATE.format(
        fingerprint=fingerprint_of(keyid),
        origin=origin.value,
        dev_note=dev_note,
        layout=layout,  # the template names each bundle file by its layout constant
        predicate_type=PREDICATE_TYPE,
    )
