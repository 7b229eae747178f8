"""The bundle as a reproducible .tar.gz (sorted entries, fixed times and owners), and its safe extraction."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path, PurePosixPath

from windtunnel._bundle.layout import LayoutError, bundle_files, check_name
from windtunnel._files import write_atomic_bytes

FIXED_MTIME = 0
MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 2 << 30


def write_archive(root: Path, target: Path) -> Path:
    """Write root as target (.tar.gz) under a top directory named like root; the same files give the same bytes."""
    prefix = root.name
    buffer = io.BytesIO()
    files = bundle_files(root)
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        directories = sorted({str(PurePosixPath(name).parent) for name in files} - {"."})
        tar.addfile(_entry(prefix, tarfile.DIRTYPE, 0))
        for directory in _with_parents(directories):
            tar.addfile(_entry(f"{prefix}/{directory}", tarfile.DIRTYPE, 0))
        for name in files:
            data = (root / name).read_bytes()
            tar.addfile(_entry(f"{prefix}/{name}", tarfile.REGTYPE, len(data)), io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=FIXED_MTIME) as gz:
        gz.write(buffer.getvalue())
    write_atomic_bytes(target, packed.getvalue())  # a crash leaves the old archive or the new, never half
    return target


def _with_parents(directories: list[str]) -> list[str]:
    every = set(directories)
    for directory in directories:
        every.update(str(parent) for parent in PurePosixPath(directory).parents if str(parent) != ".")
    return sorted(every)


def _entry(name: str, kind: bytes, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.mtime = FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def extract_archive(archive: Path, into: Path) -> Path:
    """Extract a bundle archive and return its root; links, devices, absolute or `..` names are refused."""
    with tarfile.open(archive, mode="r:gz") as tar:
        members = tar.getmembers()
        names = _checked_names(members)
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python before 3.11.4 (Debian bookworm's 3.11.2, the images' Python): names checked above
            tar.extractall(into)  # noqa: S202
    tops = {PurePosixPath(name).parts[0] for name in names}
    if len(tops) == 1 and (into / next(iter(tops))).is_dir():
        return into / next(iter(tops))
    return into


def _checked_names(members: list[tarfile.TarInfo]) -> list[str]:
    """Member names without a leading `./` (as `tar -C dir .` writes them), each one checked."""
    if len(members) > MAX_MEMBERS:
        raise LayoutError(f"the archive has {len(members)} entries, more than {MAX_MEMBERS}")
    if sum(member.size for member in members) > MAX_TOTAL_BYTES:
        raise LayoutError("the archive expands to more than 2 GiB")
    names: list[str] = []
    for member in members:
        if not (member.isfile() or member.isdir()):
            raise LayoutError(
                f"archive entry {member.name} is a link or special file; bundles hold regular files"
            )
        name = member.name.rstrip("/").removeprefix("./")
        if name in ("", "."):
            continue
        check_name(name)
        names.append(name)
    return names
