"""`wt verify BUNDLE --key PUB`: check a certification bundle offline. Exit 0 valid, 1 invalid, 2 usage."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from windtunnel._bundle.keys import KeyOrigin
from windtunnel._bundle.models import CertificationResult
from windtunnel._bundle.verify import VerifyReport, verify_bundle
from windtunnel._config import Settings
from windtunnel.errors import UsageError

EXIT_VALID = 0
EXIT_INVALID = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "verify",
        help="verify a signed certification bundle offline",
        description="Verify a certification bundle (its directory or .tar.gz) with a public key: one DSSE "
        "signature over an in-toto statement, every file digest, the MANIFEST, agreement between "
        "checks.json, junit.xml and verdict.json, tape ages at run time, and no credentials. "
        "Exit 0 when valid, 1 when invalid (the first reason is printed), 2 when the bundle or key "
        "cannot be read.",
    )
    parser.add_argument("bundle", type=Path, metavar="BUNDLE", help="bundle directory or .tar.gz")
    parser.add_argument(
        "--key",
        required=True,
        type=Path,
        metavar="PUB",
        help="PEM public key of the signer; keys/signer.pub.pem in the bundle only proves self-consistency",
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
    try:
        key_pem = Path(args.key).read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read the public key {args.key}: {exc.strerror}",
            hint="pass --key with a PEM public key file, e.g. BUNDLE/keys/signer.pub.pem",
            path=str(args.key),
        ) from exc
    report = verify_bundle(bundle, key_pem)
    print(_render(report, args.format))  # noqa: T201
    if not report.valid:
        return EXIT_INVALID
    if args.require_passed and report.result is not CertificationResult.PASSED:
        return EXIT_INVALID
    return EXIT_VALID


def _render(report: VerifyReport, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2)
    if not report.valid:
        return f"INVALID {report.bundle}\n  {report.check}: {report.reason}"
    lines = [
        f"VALID {report.bundle}",
        f"  verdict: {report.result.value if report.result else 'unknown'}",
        f"  signed by key {report.keyid} ({report.key_origin.value if report.key_origin else 'unknown'})",
        f"  {report.subjects} subjects; checks passed: {', '.join(report.passed)}",
    ]
    if report.key_origin is KeyOrigin.DEV:
        lines.append("  warning: an unverified dev key signed it; it proves integrity, not who produced it")
    return "\n".join(lines)
