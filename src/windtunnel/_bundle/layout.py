"""Where things live in a bundle directory, how its files are listed, and the MANIFEST.sha256 format."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from windtunnel._bundle.canonical import is_sha256_hex

# Every name in a bundle, defined here only (docs/bundle.md).
RUN = "run.json"
CHECKS = "checks.json"
JUNIT = "junit.xml"
VERDICT = "verdict.json"
REPORT = "report.html"
MANIFEST = "MANIFEST.sha256"
VERIFY_MD = "VERIFY.md"
EVIDENCE_DIR = "evidence"
TRACES_DIR = "traces"
TAPES_DIR = "tapes"
KEYS_DIR = "keys"
ATTESTATIONS_DIR = "attestations"
TAPE_INDEX = f"{TAPES_DIR}/index.json"
PUBLIC_KEY = f"{KEYS_DIR}/signer.pub.pem"
ATTESTATION = f"{ATTESTATIONS_DIR}/certification.intoto.jsonl"
SIGSTORE_BUNDLE = f"{ATTESTATIONS_DIR}/certification.sigstore.json"
SHARD = "shard.json"
"""A shard's place in its plan (`wt certify --shard I/N`): plan digest, index, count, its part."""
MERGE = "merge.json"
"""A merged bundle's shards (`wt merge`): each one's prefix, statement digest and signer."""
SHARDS_DIR = "shards"
"""A merged bundle keeps each shard's whole bundle under shards/<index>/."""

REQUIRED = (RUN, CHECKS, JUNIT, VERDICT)
"""Result files the pipeline must write before sealing."""

ATTESTATIONS = frozenset({ATTESTATION, SIGSTORE_BUNDLE})
"""The only files that are not statement subjects: they carry the statement, so they cannot be in it."""

IMAGE_PREFIX = "image:"
STATEMENT_PREFIX = "statement:"
"""A merged bundle's subject naming a shard's signed statement: statement:shards/<index>."""
NOT_FILES = (IMAGE_PREFIX, STATEMENT_PREFIX)
"""Subject names that are not files of the bundle."""
COST_FILE = "cost.json"
"""A runtime's priced selftest runs: evidence/<runtime>/selftest/cost.json (docs/bundle.md)."""

_UNSAFE = re.compile(r"[^0-9A-Za-z._-]")


def safe_part(part: str) -> str:
    """A runtime, pack or check name as one path part of the bundle (evidence/<runtime>/<stage>/...)."""
    return _UNSAFE.sub("_", part) or "_"


def cost_evidence(runtime: str) -> str:
    """Where a runtime's cost evidence lives in the bundle."""
    return f"{EVIDENCE_DIR}/{safe_part(runtime)}/selftest/{COST_FILE}"


class LayoutError(ValueError):
    """The directory holds something a bundle may not: a symlink, a special file, a bad name."""


def bundle_files(root: Path) -> list[str]:
    """Every regular file under root as a sorted POSIX relative path; symlinks and specials are refused."""
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            raise LayoutError(f"{relative} is a symlink; a bundle holds regular files only")
        if path.is_dir():
            continue
        if not path.is_file():
            raise LayoutError(f"{relative} is not a regular file")
        check_name(relative)
        found.append(relative)
    return sorted(found)


def check_name(name: str) -> None:
    """A subject or manifest name: relative, normalised, no backslashes or control characters."""
    pure = PurePosixPath(name)
    if (
        not name
        or pure.is_absolute()
        or ".." in pure.parts
        or "." in pure.parts
        or pure.as_posix() != name
        or "\\" in name
        or any(ord(c) < 32 for c in name)
    ):
        raise LayoutError(f"{name!r} is not a safe relative file name")


def render_manifest(digests: Mapping[str, str]) -> str:
    """sha256sum format (two spaces, text mode), sorted by name: `sha256sum -c MANIFEST.sha256` works."""
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))


def parse_manifest(text: str) -> dict[str, str]:
    """Name -> digest; raises LayoutError on a malformed, unsorted or repeated line."""
    entries: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or not is_sha256_hex(digest):
            raise LayoutError(f"{MANIFEST} line {number} is not '<sha256>  <path>': {line[:80]!r}")
        check_name(name)
        if name in entries:
            raise LayoutError(f"{MANIFEST} lists {name} twice")
        entries[name] = digest
    if list(entries) != sorted(entries):
        raise LayoutError(f"{MANIFEST} is not sorted by path")
    return entries


def subject_files(files: Iterable[str]) -> list[str]:
    return sorted(name for name in files if name not in ATTESTATIONS)


def in_shards(name: str) -> bool:
    """Whether a file lies in a merged bundle's shards/: its shard's own statement signs it."""
    return name.startswith(f"{SHARDS_DIR}/")


def signed_directly(files: Iterable[str], *, merged: bool) -> list[str]:
    """The files a statement names one by one. A merged bundle's statement names each shard's statement
    instead of the shard's files (which that statement names by digest), so it stays under MAX_SUBJECTS
    whatever the number of shards; any other bundle names every file."""
    return [name for name in files if not (merged and in_shards(name))]
