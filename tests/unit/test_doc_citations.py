"""Comments and docs cite this repository's own docs: no private design documents, no dead doc links."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from windtunnel._conformance.kit import CHECKS

REPO = Path(__file__).resolve().parents[2]
PRIVATE_CITATION = re.compile(r"(?<![a-z])seeds?[ _]?0[0-9]{2}(?![0-9])", re.IGNORECASE)
"""A numbered design document that users of this repository do not have."""
DOC_PATH = re.compile(r"\bdocs/([\w-]+\.md)\b")
HEADING = re.compile(r"^#+ +(.+?) *$", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    """Every file git tracks here that reads as UTF-8 text."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    files = []
    for name in filter(None, listed.split("\0")):
        path = REPO / name
        try:
            path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        files.append(path)
    return files


def test_no_tracked_file_cites_a_private_design_document() -> None:
    hits = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in tracked_text_files()
        if path != Path(__file__).resolve()  # its own examples of what it forbids
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_CITATION.search(line)
    ]
    assert not hits, "cite docs/*.md or the requirement set instead:\n" + "\n".join(hits)


def test_the_pattern_catches_the_spellings_it_forbids() -> None:
    for text in ("(seed 000)", "Seed 004 keeps", "seed002", "def test_seed_000_example"):
        assert PRIVATE_CITATION.search(text), text
    for text in ("--seed 42", "the seed prompt", "seed=0", "seeded 001"):
        assert not PRIVATE_CITATION.search(text), text


def recorded_by_a_harness(path: Path) -> bool:
    """A committed tape holds what a harness sent the model, its own prompt included: a docs path
    in it is the harness's (Codex names a SKILL.md of its own), not a citation of ours."""
    return path.suffix == ".jsonl" and "tapes" in path.relative_to(REPO).parts


def test_every_cited_doc_exists() -> None:
    missing = {
        f"{path.relative_to(REPO)} cites docs/{name}"
        for path in tracked_text_files()
        if not recorded_by_a_harness(path)
        for name in DOC_PATH.findall(path.read_text(encoding="utf-8"))
        if not (REPO / "docs" / name).is_file()
    }
    assert not missing, sorted(missing)


def anchors(doc: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    return {
        re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        for heading in HEADING.findall(doc.read_text(encoding="utf-8"))
    }


def test_each_conformance_check_has_its_section_and_cites_a_doc_that_exists() -> None:
    sections = anchors(REPO / "docs" / "conformance.md")
    for check in CHECKS:
        anchor = re.sub(r"[^\w\- ]", "", check.id.lower())  # faults/model_429: #faultsmodel_429
        assert anchor in sections, f"docs/conformance.md has no section for {check.id}"
        cited = re.findall(r"docs/[\w-]+\.md", check.clause)
        assert cited, f"{check.id}'s clause cites no doc of this repository: {check.clause!r}"
        assert all((REPO / doc).is_file() for doc in cited), cited
