"""`wt verify BUNDLE --key PUB | --key-fingerprint SHA256:...`: check a certification bundle offline.
Exit 0 valid, 1 invalid, 2 usage."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from windtunnel._bundle.keys import KeyOrigin
from windtunnel._bundle.verify import VerifyReport, verify_bundle
from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.vocabulary import CertificationResult, Exit
from windtunnel._files import os_error_as
from windtunnel.errors import UsageError

OWN_KEY_WARNING = (
    "the key came from the bundle itself ({key}): this proves the bundle is intact, not who signed it; "
    "pin the signer with --key-fingerprint {fingerprint}, checked against the fingerprint the signer "
    "publishes, or with --key from your own store"
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "verify")
    parser.add_argument("bundle", type=file_path, metavar="BUNDLE", help="bundle directory or .tar.gz")
    trust = parser.add_mutually_exclusive_group(required=True)
    trust.add_argument(
        "--key",
        type=file_path,
        metavar="PUB",
        help="PEM public key of the signer, from your own store (not the bundle's keys/signer.pub.pem)",
    )
    trust.add_argument(
        "--key-fingerprint",
        metavar="SHA256:HEX",
        help="fingerprint of the signer's key, as `wt certify` prints it and the signer publishes it",
    )
    parser.add_argument(
        "--require-passed",
        action="store_true",
        help="also exit 1 when the bundle is valid but its verdict is not PASSED (for merge gates)",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default: text)"
    )
    parser.set_defaults(handler=execute)


def execute(args: argparse.Namespace, _settings: Settings) -> int:
    bundle: Path = args.bundle
    if not (bundle.is_dir() or bundle.is_file()):
        raise UsageError(
            f"bundle {bundle} does not exist",
            hint="pass the directory `wt certify --out` wrote, or its .tar.gz",
            path=str(bundle),
        )
    if args.key is None:
        report = verify_bundle(bundle, fingerprint=args.key_fingerprint)
        warnings = []
    else:
        report = verify_bundle(bundle, _read_key(args.key), key_source=f"--key {args.key}")
        own = report.valid and _inside_bundle(args.key, bundle)
        warnings = [OWN_KEY_WARNING.format(key=args.key, fingerprint=report.fingerprint)] if own else []
    print(_render(report, args.format, warnings))  # noqa: T201
    if not report.valid:
        return Exit.FAILED
    if args.require_passed and report.result is not CertificationResult.PASSED:
        return Exit.FAILED
    return Exit.OK


def _read_key(path: Path) -> bytes:
    fix = "pass --key with the signer's PEM public key file, or --key-fingerprint SHA256:..."
    with os_error_as(UsageError, f"cannot read the public key {path}", path, hint=fix):
        return path.read_bytes()


def _inside_bundle(key: Path, bundle: Path) -> bool:
    """Whether --key lies in the bundle directory (or, for BUNDLE.tar.gz, in the BUNDLE directory beside it):
    a key the bundle brought with it, which anyone who re-signed the bundle would have swapped too."""
    directory = bundle if bundle.is_dir() else bundle.with_name(bundle.name.removesuffix(".tar.gz"))
    return key.resolve().is_relative_to(directory.resolve())


def _render(report: VerifyReport, fmt: str, warnings: list[str]) -> str:
    if fmt == "json":
        return json.dumps(report.to_dict() | {"warnings": warnings}, indent=2)
    if not report.valid:
        return f"INVALID {report.bundle}\n  {report.check}: {report.reason}"
    lines = [
        f"VALID {report.bundle}",
        f"  verdict: {report.result.value if report.result else 'unknown'}",
        f"  signed by key {report.fingerprint} ({report.key_origin.value if report.key_origin else 'unknown'})",
        f"  {report.subjects} subjects; checks passed: {', '.join(report.passed)}",
    ]
    if report.key_origin is KeyOrigin.DEV:
        lines.append("  warning: an unverified dev key signed it; it proves integrity, not who produced it")
    lines += [f"  warning: {warning}" for warning in warnings]
    return "\n".join(lines)
