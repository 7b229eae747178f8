"""`wt merge`: the shards of one plan, each verified against trusted keys, into one signed bundle.

Each shard's whole bundle goes under shards/<index>/ unchanged; the merged run.json, checks.json (recomputed
from the shards' checks, never a copied verdict), junit.xml, verdict.json, merge.json and report.html go on
top, and the seal signs it all plus each shard's statement digest (docs/ci.md, "Sharded certification").
"""

from __future__ import annotations

import platform
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

from windtunnel import __version__
from windtunnel._bundle import HostInfo, Signer, Verdict, junit_for, layout, seal_bundle
from windtunnel._bundle.archive import extract_archive
from windtunnel._bundle.layout import LayoutError
from windtunnel._bundle.merge import Shard, check_shard_set, merged_run, merged_tapes, verified_shard
from windtunnel._bundle.merge_checks import merged_checks
from windtunnel._bundle.shard_models import MergeInfo
from windtunnel._files import write_atomic
from windtunnel._pipeline.config import REFERENCE
from windtunnel._pipeline.context import print_nothing
from windtunnel._pipeline.outdir import out_lock, prepare_out_dir
from windtunnel._pipeline.publish import Published
from windtunnel._report.page import render_bundle_report
from windtunnel._signals import deferred_stop
from windtunnel.errors import UsageError


def merge_shards(
    paths: Sequence[Path],
    *,
    out: Path,
    signer: Signer,
    trusted: Sequence[bytes],
    progress: Callable[[str], None] = print_nothing,
) -> Published:
    """Merge the shard bundles at `paths` (directories or .tar.gz) into `out` and sign it with `signer`.
    `trusted` are the PEM public keys a shard may be signed by. A path that is no bundle is a UsageError,
    raised before `out` is touched; a shard that cannot be merged a VerificationError naming it and why."""
    out = out.resolve()
    _check_paths(paths, out)
    with out_lock(out), tempfile.TemporaryDirectory(prefix="wt-merge-") as scratch:
        for line in prepare_out_dir(out):
            progress(f"removed {line}")
        roots = [_unpacked(path, Path(scratch) / str(n)) for n, path in enumerate(paths)]
        shards = [verified_shard(str(path), root, trusted) for path, root in zip(paths, roots, strict=True)]
        for shard in shards:
            progress(f"verified {shard.name}: shard {shard.info.label} of plan {shard.info.plan_digest[:12]}")
        merge = check_shard_set(shards, control=REFERENCE)
        ordered = sorted(shards, key=lambda shard: shard.info.index)
        for shard in ordered:
            shutil.copytree(shard.root, out / shard.prefix)
        return _publish(out, ordered, merge, signer)


def _publish(out: Path, ordered: Sequence[Shard], merge: MergeInfo, signer: Signer) -> Published:
    checks = merged_checks([(shard.prefix, shard.contents.checks) for shard in ordered])
    verdict = Verdict.from_checks(checks, signing_key=signer.origin)
    run = merged_run(
        ordered, run_id=f"merge-{merge.plan_digest[:12]}", tool_version=__version__, host=_host()
    )
    write_atomic(out / layout.MERGE, merge.model_dump_json(indent=2))
    write_atomic(out / layout.RUN, run.model_dump_json(indent=2))
    write_atomic(out / layout.CHECKS, checks.model_dump_json(indent=2))
    write_atomic(out / layout.JUNIT, junit_for(checks))
    write_atomic(out / layout.VERDICT, verdict.model_dump_json(indent=2))
    write_atomic(out / layout.TAPE_INDEX, merged_tapes(ordered).model_dump_json(indent=2))
    write_atomic(out / layout.REPORT, render_bundle_report(out))
    with deferred_stop():  # a stop signal waits for the seal: never a half-signed bundle
        sealed = seal_bundle(out, signer=signer)
    return Published(verdict=verdict, seal=sealed)


def _check_paths(paths: Sequence[Path], out: Path) -> None:
    fix = "pass the directories or .tar.gz files that `wt certify --shard I/N` wrote"
    for path in paths:
        if not path.exists():
            raise UsageError(f"shard {path} does not exist", hint=fix, path=str(path))
        if path.is_dir() and not any((path / name).is_file() for name in (layout.RUN, layout.MANIFEST)):
            raise UsageError(f"{path} is not a bundle: it holds no {layout.RUN}", hint=fix, path=str(path))
        where = path.resolve()
        if where == out or where.is_relative_to(out) or out.is_relative_to(where):
            raise UsageError(
                f"--out {out} would overwrite the shard {path}",
                hint="pass a new directory as --out",
                path=str(out),
            )


def _unpacked(path: Path, scratch: Path) -> Path:
    """The bundle directory at `path`, or its archive extracted into `scratch`."""
    if path.is_dir():
        return path
    fix = "pass the directories or .tar.gz files that `wt certify --shard I/N` wrote"
    scratch.mkdir(parents=True)
    try:
        return extract_archive(path, scratch)
    except (LayoutError, OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        raise UsageError(f"{path} is not a bundle archive: {exc}", hint=fix, path=str(path)) from exc


def _host() -> HostInfo:
    """The merging machine's OS and Python only: the shards' run.json keep their engines."""
    return HostInfo(platform=f"{platform.system()}-{platform.machine()}", python=platform.python_version())
