"""The bundle directory before a run: only what Wind Tunnel wrote there is replaced, anything else is refused.

A directory is Wind Tunnel's when it holds the marker file (MARKER), written first into a new or empty
--out and never by anything else. From such a directory a run removes only:
- for a sealed bundle (MANIFEST.sha256 present): the files the MANIFEST lists, the MANIFEST, the
  attestations and the marker; any other file means someone else wrote there, so the run refuses;
- for an unsealed one (a run that was killed, or a HARNESS_INVALID one): the files under the top-level
  names the marker says Wind Tunnel writes; any other top-level name is refused the same way.
DIR.tar.gz beside it is replaced only when it is a Wind Tunnel bundle archive (its first file is the
marker). A symlink anywhere is refused: Wind Tunnel writes none, and following one could delete elsewhere.
"""

from __future__ import annotations

import gzip
import json
import os
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path, PurePosixPath

from windtunnel import __version__
from windtunnel._bundle import layout
from windtunnel._bundle.seal import default_archive
from windtunnel._files import os_error_as, write_atomic
from windtunnel._locks import held_lock
from windtunnel.errors import UsageError

MARKER = ".windtunnel-bundle.json"
"""Written first into --out; says the directory is Wind Tunnel's and which top-level names it writes."""

OWNED = (
    MARKER,
    layout.RUN,
    layout.CHECKS,
    layout.JUNIT,
    layout.VERDICT,
    layout.MANIFEST,
    layout.VERIFY_MD,
    layout.REPORT,
    layout.EVIDENCE_DIR,
    layout.TRACES_DIR,
    layout.TAPES_DIR,
    layout.KEYS_DIR,
    layout.ATTESTATIONS_DIR,
    layout.SHARD,
    layout.MERGE,
    layout.SHARDS_DIR,
)
"""The top-level names a certify run writes into --out (files and directories)."""

_FIX = "pass a new or empty directory as --out (or move your files out of this one)"


def is_bundle(directory: Path) -> bool:
    """Whether `directory` holds Wind Tunnel's marker, i.e. a bundle (sealed or not) a run may replace."""
    return (directory / MARKER).is_file() and not (directory / MARKER).is_symlink()


@contextmanager
def out_lock(out: Path) -> Iterator[Path]:
    """Hold the lock of --out (`.<name>.wt-lock` beside it) for the whole run; a second run into the same
    directory fails at once with the holder's pid instead of racing the first. Only taking the lock is
    guarded here: an OSError of the run itself is the run's, never reported as a lock problem."""
    resolved = out.resolve()
    lock = resolved.with_name(f".{resolved.name}.wt-lock")
    with ExitStack() as held:
        try:  # only taking the lock is reported as such: an OSError of the run itself goes on as it is
            resolved.parent.mkdir(parents=True, exist_ok=True)
            holder = held.enter_context(held_lock(lock, owner=f"wt certify --out {resolved.name}"))
        except OSError as exc:
            in_the_way = next((parent for parent in resolved.parents if parent.is_file()), None)
            if in_the_way is not None:
                raise UsageError(
                    f"--out {resolved} lies under {in_the_way}, which is a file, not a directory",
                    hint="move the file out of the way, or pass another --out",
                    path=str(resolved),
                ) from exc
            raise UsageError(
                f"cannot lock --out {resolved}: {exc.strerror or exc}",
                hint="pass an --out whose parent directory you can write to",
                path=str(resolved),
            ) from exc
        if holder is not None:
            raise UsageError(
                f"--out {resolved} is in use by another wt certify (pid {holder}); two runs into one "
                "directory would overwrite each other's bundle",
                hint="wait for that run to finish, or pass another --out",
                path=str(resolved),
            )
        yield lock


def prepare_out_dir(out: Path) -> list[str]:
    """Make `out` a directory holding only a fresh marker; return what was removed (an earlier bundle's
    files, DIR.tar.gz). Everything is checked before anything is removed.

    An earlier bundle must never survive a run: a HARNESS_INVALID run signs nothing, so a PASSED bundle
    left in place would still verify and a CI upload would ship a stale certification.
    """
    out = out.resolve()
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"--out {out} is a file, not a directory", hint=_FIX, path=str(out))
    archive = default_archive(out)
    doomed = _replaceable_files(out) if out.is_dir() else []
    _check_archive(archive)
    removed: list[str] = []
    if doomed:
        _remove(out, doomed)
        removed.append(f"the earlier bundle in {out}")
    if archive.is_file():
        archive.unlink()
        removed.append(str(archive))
    with os_error_as(
        UsageError, f"cannot write into --out {out}", out, hint="pass a directory you can write to"
    ):
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / MARKER, _marker_text())
    return removed


def _marker_text() -> str:
    marker = {"schema_version": 1, "written_by": f"windtunnel {__version__}", "owns": list(OWNED)}
    return json.dumps(marker, indent=2) + "\n"


def _replaceable_files(out: Path) -> list[str]:
    """The files of `out` a run may remove (bundle-relative), or a UsageError when it holds anything else."""
    present = _walk(out)
    if not present or present == [MARKER]:  # empty, or only just marked by this run (certify marks first)
        return []
    if not is_bundle(out):
        raise UsageError(
            f"--out {out} is not empty and holds no Wind Tunnel bundle (no {MARKER}; it holds "
            f"{_first(present)}); wt certify replaces only the bundles it wrote",
            hint=_FIX,
            path=str(out),
        )
    if (out / layout.MANIFEST).is_file():
        allowed = _sealed_names(out)
        foreign = sorted(name for name in present if name not in allowed)
    else:
        owns = _owned(out)
        foreign = sorted(name for name in present if PurePosixPath(name).parts[0] not in owns)
    if foreign:
        raise UsageError(
            f"--out {out} holds a Wind Tunnel bundle, but also {foreign[0]}, which that bundle does not list "
            f"({len(foreign)} such file(s)); wt certify removes only the files it wrote",
            hint=_FIX,
            path=str(out),
        )
    return present


def _walk(out: Path) -> list[str]:
    """Every file under `out`, bundle-relative; a symlink or special file is refused, never followed."""
    found: list[str] = []
    for directory, subdirectories, files in os.walk(out):
        base = Path(directory)
        for name in [*subdirectories, *files]:
            path = base / name
            relative = path.relative_to(out).as_posix()
            if path.is_symlink():
                raise UsageError(
                    f"--out {out} holds a symlink ({relative}); Wind Tunnel writes none, so it is not a bundle "
                    "it wrote",
                    hint=_FIX,
                    path=str(out),
                )
            if name in files:
                if not path.is_file():
                    raise UsageError(
                        f"--out {out} holds {relative}, which is not a regular file", hint=_FIX, path=str(out)
                    )
                found.append(relative)
    return sorted(found)


def _sealed_names(out: Path) -> set[str]:
    try:
        listed = layout.parse_manifest((out / layout.MANIFEST).read_text(encoding="utf-8"))
    except (layout.LayoutError, UnicodeDecodeError, OSError) as exc:
        raise UsageError(
            f"--out {out} holds a Wind Tunnel bundle whose {layout.MANIFEST} cannot be read ({exc}), so "
            "what it may replace is unknown",
            hint=_FIX,
            path=str(out),
        ) from exc
    names = {*listed, layout.MANIFEST, MARKER, *layout.ATTESTATIONS}
    if (
        layout.MERGE in listed
    ):  # a merged bundle: each shard under shards/ lists its own files (docs/bundle.md)
        for shard in sorted((out / layout.SHARDS_DIR).glob("*/")):
            if (shard / layout.MANIFEST).is_file():
                prefix = shard.relative_to(out).as_posix()
                names |= {f"{prefix}/{name}" for name in _sealed_names(shard)}
    return names


def _owned(out: Path) -> set[str]:
    """The top-level names the marker says Wind Tunnel writes (what the marker's version wrote)."""
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        owns = data["owns"]
        if not isinstance(owns, list) or not all(isinstance(name, str) and "/" not in name for name in owns):
            raise ValueError("owns is not a list of top-level names")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"--out {out} holds a damaged {MARKER} ({exc}), so what it may replace is unknown",
            hint=_FIX,
            path=str(out),
        ) from exc
    return {*owns, MARKER}


def _check_archive(archive: Path) -> None:
    """DIR.tar.gz beside --out may be replaced only when Wind Tunnel wrote it: its first file is the marker."""
    if not (archive.exists() or archive.is_symlink()):
        return
    if (
        archive.is_symlink()
        or not archive.is_file()
        or _first_file(archive) != f"{archive.name[:-7]}/{MARKER}"
    ):
        raise UsageError(
            f"{archive} exists and is not a Wind Tunnel bundle archive, and wt certify writes the archive of "
            "--out there",
            hint="move that file away, or pass another --out",
            path=str(archive),
        )


def _first_file(archive: Path) -> str | None:
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                if member.isfile():
                    return member.name
    except (OSError, EOFError, tarfile.TarError, zlib.error, gzip.BadGzipFile):
        return None
    return None


def _remove(out: Path, files: list[str]) -> None:
    """Remove the files, the marker last (so a run killed here still finds its directory its own), then
    the directories left empty."""
    for name in sorted(files, key=lambda name: (name == MARKER, name == layout.MANIFEST, name)):
        (out / name).unlink()
    directories = {parent for name in files for parent in PurePosixPath(name).parents if str(parent) != "."}
    for directory in sorted(directories, key=lambda d: len(d.parts), reverse=True):
        path = out / directory
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _first(names: list[str]) -> str:
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"{names[0]}{more}"
