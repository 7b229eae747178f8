"""The in-toto Statement v1 a bundle signs: one subject per file and per image, our predicate on top.

Spec: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from windtunnel._bundle.canonical import is_sha256_hex
from windtunnel._bundle.layout import IMAGE_PREFIX, NOT_FILES, STATEMENT_PREFIX, LayoutError, check_name
from windtunnel.errors import VerificationError

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://windtunnel.dev/certification/v1"
MAX_SUBJECTS = 1024
"""sigstore-go (and so cosign) refuses statements with more subjects than this."""


@dataclass(frozen=True, slots=True)
class Statement:
    subjects: Mapping[str, str]
    """name -> sha256 hex; files by bundle-relative path, images as image:<name>, a merged bundle's shard
    statements as statement:shards/<index>."""
    predicate: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "_type": STATEMENT_TYPE,
            "subject": [
                {"name": name, "digest": {"sha256": self.subjects[name]}} for name in sorted(self.subjects)
            ],
            "predicateType": PREDICATE_TYPE,
            "predicate": dict(self.predicate),
        }

    @property
    def file_subjects(self) -> dict[str, str]:
        return {name: digest for name, digest in self.subjects.items() if not name.startswith(NOT_FILES)}

    @property
    def statement_subjects(self) -> dict[str, str]:
        return {name: digest for name, digest in self.subjects.items() if name.startswith(STATEMENT_PREFIX)}

    @property
    def image_subjects(self) -> dict[str, str]:
        return {
            name.removeprefix(IMAGE_PREFIX): digest
            for name, digest in self.subjects.items()
            if name.startswith(IMAGE_PREFIX)
        }


def parse_statement(payload: bytes) -> Statement:
    """Read a signed payload back; anything but our Statement v1 shape is a VerificationError."""
    try:
        data = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(f"the signed payload is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad("the signed payload is not a JSON object")
    if data.get("_type") != STATEMENT_TYPE:
        raise _bad(f"_type is {data.get('_type')!r}, expected {STATEMENT_TYPE!r}")
    if data.get("predicateType") != PREDICATE_TYPE:
        raise _bad(f"predicateType is {data.get('predicateType')!r}, expected {PREDICATE_TYPE!r}")
    predicate = data.get("predicate")
    if not isinstance(predicate, dict):
        raise _bad("predicate is not an object")
    return Statement(subjects=_subjects(data.get("subject")), predicate=predicate)


def _subjects(raw: object) -> dict[str, str]:
    if not isinstance(raw, list) or not raw:
        raise _bad("subject is not a non-empty list")
    subjects: dict[str, str] = {}
    for index, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        digest = item.get("digest") if isinstance(item, dict) else None
        if not isinstance(name, str) or not isinstance(digest, dict):
            raise _bad(f"subject[{index}] needs a string name and a digest object")
        if not is_sha256_hex(digest.get("sha256")):
            raise _bad(f"subject {name!r} has no sha256 digest of 64 lowercase hex digits")
        if not name.startswith(IMAGE_PREFIX):
            try:
                check_name(name.removeprefix(STATEMENT_PREFIX))
            except LayoutError as exc:
                raise _bad(f"subject {exc}") from exc
        if name in subjects:
            raise _bad(f"subject {name!r} appears twice")
        subjects[name] = digest["sha256"]
    return subjects


def _bad(what: str) -> VerificationError:
    message = f"the statement is malformed: {what}"
    return VerificationError(message, check="statement.format", reason=message)
