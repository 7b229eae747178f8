"""An exception that is none of Wind Tunnel's own errors, as one line and a fix: a fault of the machine (a full
or read-only disk, a file in the way, the engine gone) or, for anything else, a bug of Wind Tunnel's.

`wt` prints it instead of a traceback (`wt --debug` shows the traceback) and exits 2.
"""

from __future__ import annotations

import errno

_DISK = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file grew past the size this process may write",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.ENOTDIR: "a file is in the way where a directory is needed",
    errno.EEXIST: "a file is in the way",
    errno.EISDIR: "a directory is in the way where a file is needed",
    errno.ENOENT: "it does not exist",
    errno.EIO: "the disk reported an input/output error",
}
_DISK_FIX = {
    errno.ENOSPC: "free space on that disk (or pass --out on another one) and run again; what was written "
    "so far is kept",
    errno.EDQUOT: "free space within your quota (or pass --out elsewhere) and run again",
    errno.EFBIG: "raise the file size limit (ulimit -f) or write elsewhere",
    errno.EROFS: "pass an output directory on a writable file system",
    errno.EACCES: "pass a path you can write to, or fix its permissions",
    errno.EPERM: "pass a path you can write to, or fix its permissions",
    errno.ENOTDIR: "move the file out of the way, or pass another path",
    errno.EEXIST: "move the file out of the way, or pass another path",
    errno.EISDIR: "pass a file path, not a directory",
    errno.ENOENT: "create its directory first, or pass an existing path",
    errno.EIO: "check the disk (dmesg), then run again",
}
_WRITING = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
_ENGINE_MODULES = ("docker.", "requests.", "urllib3.")


def describe(exc: BaseException) -> tuple[str, str]:
    """(message, how to fix) for an exception that is not a WindTunnelError."""
    if isinstance(exc, OSError) and exc.errno in _DISK:
        return _os_error(exc)
    if _from_engine(exc):
        first = (str(exc).splitlines() or [""])[0][:300]
        return (
            f"the Docker engine stopped answering: {type(exc).__name__}: {first}",
            "check that the engine runs (`docker info`, DOCKER_HOST) and run again; what was recorded so far "
            "is kept, and what this run left behind goes with the next run or `wt images sweep`",
        )
    if isinstance(exc, OSError):
        return _os_error(exc)
    first = (str(exc).splitlines() or [""])[0][:300]
    return (
        f"Wind Tunnel failed unexpectedly: {type(exc).__name__}: {first}",
        "this is a bug in Wind Tunnel: run again with `wt --debug ...` for the traceback and report it",
    )


def _os_error(exc: OSError) -> tuple[str, str]:
    what = _DISK.get(exc.errno or 0, exc.strerror or str(exc))
    fix = _DISK_FIX.get(exc.errno or 0, "check the path and the disk, then run again")
    verb = "cannot write" if exc.errno in _WRITING else "cannot use"
    target = (
        f"{verb} {exc.filename}"
        if exc.filename
        else f"a file operation failed ({verb.rsplit(maxsplit=1)[-1]})"
    )
    other = f" (and {exc.filename2})" if exc.filename2 else ""
    return f"{target}{other}: {what} ({exc.strerror or exc})", fix


def _from_engine(exc: BaseException) -> bool:
    """Raised by the Docker SDK or the HTTP stack under it (a connection the engine dropped)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__module__.startswith(_ENGINE_MODULES):
            return True
        current = current.__cause__ or current.__context__
    return False
