"""The bundle directory before a run: an earlier bundle there is removed, anything else is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

from windtunnel._bundle.seal import default_archive
from windtunnel.errors import UsageError

BUNDLE_MARKERS = ("run.json", "MANIFEST.sha256")
"""A directory holding one of these is a bundle (or a run's partial one: run.json is written first)."""


def is_bundle(directory: Path) -> bool:
    return any((directory / marker).is_file() for marker in BUNDLE_MARKERS)


def prepare_out_dir(out: Path) -> list[str]:
    """Make `out` an empty directory for this run; return what was removed (an earlier bundle, DIR.tar.gz).

    An earlier bundle must never survive a run: a HARNESS_INVALID run signs nothing, so a PASSED bundle
    left in place would still verify and a CI upload would ship a stale certification; and its files (old
    evidence, anything else in the directory) would be signed into the next bundle.
    """
    out = out.resolve()
    if out.exists() and not out.is_dir():
        raise UsageError(
            f"--out {out} is a file, not a directory", hint="pass a new or empty directory", path=str(out)
        )
    removed: list[str] = []
    if out.is_dir() and any(out.iterdir()):
        _check_replaceable(out)
        shutil.rmtree(out)
        removed.append(f"the earlier bundle in {out}")
    archive = default_archive(out)
    if archive.is_file() or archive.is_symlink():
        archive.unlink()
        removed.append(str(archive))
    out.mkdir(parents=True, exist_ok=True)
    return removed


def _check_replaceable(out: Path) -> None:
    if not is_bundle(out):
        raise UsageError(
            f"--out {out} is not empty and holds no earlier bundle (no {' or '.join(BUNDLE_MARKERS)}); "
            "wt certify replaces only its own bundles",
            hint="pass a new or empty directory as --out, or empty this one yourself",
            path=str(out),
        )
    if Path.cwd().resolve().is_relative_to(out):
        raise UsageError(
            f"--out {out} holds an earlier bundle, but also the current directory, so it cannot be replaced",
            hint="run wt certify from outside the bundle directory",
            path=str(out),
        )
