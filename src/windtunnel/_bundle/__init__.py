"""The certification bundle: result files, an in-toto statement in a DSSE envelope, and its verification.

The pipeline writes run.json, checks.json, junit.xml (junit_for), verdict.json (Verdict.from_checks),
traces/ and tapes/index.json into a directory, then calls seal_bundle; verify_bundle checks the result.
Format and rules: docs/bundle.md.
"""

from __future__ import annotations

from windtunnel._bundle.errors import BundleSealError, SigningKeyError
from windtunnel._bundle.junit_map import junit_for
from windtunnel._bundle.keys import KeyOrigin, Signer, load_signer
from windtunnel._bundle.models import (
    CheckRecord,
    CheckScope,
    ChecksFile,
    HostInfo,
    RunInfo,
    RuntimeInfo,
    RuntimeVerdict,
    Stage,
    TapeEntry,
    TapeIndex,
    Verdict,
)
from windtunnel._bundle.seal import SealResult, default_archive, seal_bundle
from windtunnel._bundle.verify import VerifyReport, verify_bundle
from windtunnel._core.vocabulary import CertificationResult, CheckStatus

__all__ = [
    "seal_bundle",
    "SealResult",
    "default_archive",
    "verify_bundle",
    "VerifyReport",
    "Signer",
    "KeyOrigin",
    "load_signer",
    "junit_for",
    "RunInfo",
    "HostInfo",
    "RuntimeInfo",
    "ChecksFile",
    "CheckRecord",
    "CheckStatus",
    "CheckScope",
    "Stage",
    "Verdict",
    "RuntimeVerdict",
    "CertificationResult",
    "TapeIndex",
    "TapeEntry",
    "BundleSealError",
    "SigningKeyError",
]
