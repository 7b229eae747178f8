"""`wt merge SHARD... --out DIR`: the shards of one plan, verified against trusted keys, as one signed bundle."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from windtunnel._bundle import load_signer
from windtunnel._bundle.keys import fingerprint_of
from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.vocabulary import CERTIFY_EXIT
from windtunnel._files import os_error_as
from windtunnel._pipeline.merge_shards import merge_shards
from windtunnel.errors import UsageError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "merge")
    parser.add_argument(
        "shards", nargs="+", type=file_path, metavar="SHARD", help="shard bundles (directories or .tar.gz)"
    )
    parser.add_argument("--out", type=file_path, required=True, metavar="DIR", help="merged bundle directory")
    parser.add_argument(
        "--key", type=file_path, metavar="SIGNER", help="signing key of the merged bundle (PKCS#8 PEM, P-256)"
    )
    parser.add_argument(
        "--trust",
        action="append",
        default=[],
        type=file_path,
        metavar="PUBKEY",
        help="PEM public key a shard may be signed by (repeatable; default: the --key signer's own)",
    )
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, settings: Settings) -> int:
    signer = load_signer(key_path=args.key, key_pem=settings.env_value("WT_SIGNING_KEY"))
    trusted = [_read_key(path) for path in args.trust] or [signer.public_pem]
    published = merge_shards(args.shards, out=args.out, signer=signer, trusted=trusted, progress=_progress)
    verdict, seal = published.verdict, published.seal
    assert seal is not None  # merge_shards seals or raises
    fingerprint = fingerprint_of(seal.keyid)
    dev = " (unverified dev key: it proves integrity, not who signed)" if seal.dev_key else ""
    print(f"{verdict.result.value}: merged {len(args.shards)} shards into {args.out}")  # noqa: T201
    print(f"signed{dev}: {seal.archive}\nsigner: {fingerprint}")  # noqa: T201
    print(f"verify: wt verify {args.out} --key-fingerprint {fingerprint} --require-passed")  # noqa: T201
    return CERTIFY_EXIT[verdict.result]


def _read_key(path: Path) -> bytes:
    with os_error_as(
        UsageError, f"cannot read the --trust key {path}", path, hint="pass a PEM public key file"
    ):
        return path.read_bytes()


def _progress(line: str) -> None:
    sys.stderr.write(f"wt merge: {line}\n")
    sys.stderr.flush()
