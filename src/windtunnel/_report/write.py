"""Writing a bundle's report where `wt report` is asked to, without ever invalidating its signature.

report.html is a signed file of the bundle (a statement subject, docs/bundle.md): it is rewritten in place
only when the bundle is unsigned or the page comes out byte for byte the same. An archive is never
touched; its report goes beside it (`out.tar.gz` -> `out.report.html`), linking into `out/`, where the
archive extracts.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from windtunnel._bundle import layout
from windtunnel._bundle.archive import extract_archive
from windtunnel._bundle.layout import LayoutError
from windtunnel._files import write_atomic
from windtunnel._report.page import render_bundle_report
from windtunnel.errors import UsageError, VerificationError

ARCHIVE_SUFFIX = ".tar.gz"
_HINT = "pass the directory `wt certify --out` wrote, or its .tar.gz"


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    changed: bool


def write_report(bundle: Path, out: Path | None = None) -> Written:
    """Render the report of `bundle` (a directory or .tar.gz) into `out`, by default its own report.html
    (a directory) or `<name>.report.html` beside it (an archive). Raises UsageError for anything else."""
    if bundle.is_dir():
        return _from_directory(bundle, out)
    if bundle.is_file() and bundle.name.endswith(ARCHIVE_SUFFIX):
        return _from_archive(bundle, out)
    if bundle.exists():
        raise UsageError(f"{bundle} is neither a bundle directory nor a {ARCHIVE_SUFFIX} archive", hint=_HINT)
    raise UsageError(f"bundle {bundle} does not exist", hint=_HINT, path=str(bundle))


def _from_directory(root: Path, out: Path | None) -> Written:
    target = (out or root / layout.REPORT).resolve()
    page = _render(root, root.resolve(), target, shown=root)
    in_place = target == (root / layout.REPORT).resolve()
    if in_place and target.is_file() and target.read_text(encoding="utf-8") == page:
        return Written(target, changed=False)
    if in_place and target.is_file() and (root / layout.ATTESTATION).is_file():
        raise UsageError(
            f"{root} is signed and its {layout.REPORT} is one of the signed files: re-rendering it in place would "
            "invalidate the signature",
            hint=f"write the report elsewhere with --out, e.g. `wt report {root} --out {root.name}.report.html`",
        )
    return _write(target, page)


def _from_archive(archive: Path, out: Path | None) -> Written:
    stem = archive.name.removesuffix(ARCHIVE_SUFFIX)
    target = (out or archive.with_name(f"{stem}.report.html")).resolve()
    with tempfile.TemporaryDirectory(prefix="wt-report-") as scratch:
        try:
            root = extract_archive(archive, Path(scratch))
        except (tarfile.TarError, LayoutError, OSError, EOFError, zlib.error) as exc:
            raise UsageError(
                f"cannot read the archive {archive}: {exc}", hint=_HINT, path=str(archive)
            ) from exc
        # Links point where the archive extracts: `tar xzf out.tar.gz` beside it gives out/.
        extracted = archive.resolve().parent / (root.name if root != Path(scratch) else stem)
        page = _render(root, extracted, target, shown=archive)
    return _write(target, page)


def _render(root: Path, linked: Path, target: Path, *, shown: Path) -> str:
    try:
        return render_bundle_report(root, link_base=_link_base(linked, target))
    except VerificationError as exc:
        raise UsageError(f"{shown} is not a Wind Tunnel bundle: {exc.message}", hint=_HINT) from exc


def _link_base(bundle: Path, target: Path) -> str:
    """The relative URL from the page's directory to the bundle's, ending in `/` (empty: the same)."""
    if target.parent == bundle:
        return ""
    relative = PurePosixPath(Path(os.path.relpath(bundle, target.parent)).as_posix())
    return quote(str(relative)) + "/"


def _write(target: Path, page: str) -> Written:
    if target.is_dir():
        raise UsageError(f"--out {target} is a directory", hint="pass a file path such as report.html")
    write_atomic(target, page)
    return Written(target, changed=True)
