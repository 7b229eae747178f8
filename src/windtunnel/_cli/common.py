"""Flags and helpers shared by verbs: selection, output format, pack loading, writing results."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from windtunnel._cli.values import file_path
from windtunnel._config import Settings
from windtunnel._files import os_error_as, write_atomic
from windtunnel._packs.loader import discover_packs, installed_packs, load_pack, shadowed
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected, Selection, select
from windtunnel.errors import PackError, SelectionError, UsageError

RUNTIME_FORMS = (
    "a name (registered, a runtimes/**/runtime.toml, or a [tool.windtunnel] runtimes entry), a runtime "
    "directory, module:attr, or an image reference with its tag"
)
"""What --runtime accepts, in every verb: the forms the one resolver tries (docs/writing-a-runtime.md)."""


def add_runtime(parser: argparse.ArgumentParser) -> None:
    """The required --runtime of a verb that drives one runtime."""
    parser.add_argument("--runtime", required=True, metavar="NAME|DIR", help=f"the runtime: {RUNTIME_FORMS}")


def add_selection(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "selection",
        "the same in every verb: values of one flag are alternatives, flags combine; globs allowed",
    )
    group.add_argument(
        "--scenario", action="append", default=[], metavar="NAME", help="scenario name or glob"
    )
    group.add_argument("--tag", action="append", default=[], metavar="TAG", help="scenario tag or glob")
    group.add_argument(
        "--pack",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="pack name or glob, matched against the project's packs ([tool.windtunnel] packs, else "
        "./scenarios/*) and installed (entry-point) packs; a project pack wins over an installed one "
        "of the same name. A path to a pack directory or pack.py loads that pack",
    )
    group.add_argument("--owner", action="append", default=[], metavar="OWNER", help="scenario owner or glob")
    add_tier(group)


def add_tier(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--tier, the same in every verb (wt certify takes it alone, without the other selection flags)."""
    parser.add_argument(
        "--tier",
        action="append",
        default=[],
        metavar="TIER",
        help="run tier (repeatable): smoke, stable, live-flaky, quarantined. Default: smoke and stable, plus "
        "live-flaky with a live model upstream. Quarantined cases run only when asked and never gate; "
        "live-flaky cases run only with a live upstream. Tiers say when a case runs, not what it asserts",
    )


def add_output(parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("text", "json", "junit")) -> None:
    parser.add_argument("--format", choices=formats, default="text", help="report format (default: text)")
    parser.add_argument(
        "--out", type=file_path, metavar="PATH", help="write the report here instead of stdout"
    )


def selected_scenarios(
    args: argparse.Namespace, settings: Settings, *, live_upstream: bool = False
) -> list[Selected]:
    """Load the packs and apply the selection; live-flaky cases run only when `live_upstream`.

    A --pack value that is an existing path loads that pack; one that looks like a path (it holds
    a '/' or ends in .py) but does not exist is an error naming it. Any other value is a name or
    glob, matched against the project's packs ([tool.windtunnel] packs; with none configured,
    ./scenarios/*) and the installed (entry-point) packs; a project pack wins a name over an
    installed one.
    """
    paths, names = _pack_values(args.pack)
    packs: list[Pack] = [load_pack(str(Path(value).resolve())) for value in paths]
    selected_by_path = [pack.name for pack in packs]
    if not paths or names:
        packs += _named_candidates(settings, names, loaded={pack.name for pack in packs})
    selection = Selection(
        scenarios=args.scenario,
        tags=args.tag,
        packs=names + selected_by_path,
        owners=args.owner,
        tiers=args.tier,
        live_upstream=live_upstream,
    )
    return select(packs, selection)


def selected_packs(values: Sequence[str], settings: Settings) -> list[Pack]:
    """The packs --pack VALUES name, by the rules of selected_scenarios(); every candidate with none.
    A name or glob that matches no pack is a SelectionError listing the known ones."""
    paths, names = _pack_values(values)
    packs: list[Pack] = [load_pack(str(Path(value).resolve())) for value in paths]
    if paths and not names:
        return packs
    candidates = _named_candidates(settings, names, loaded={pack.name for pack in packs})
    for name in names:
        if not any(fnmatchcase(pack.name, name) for pack in [*packs, *candidates]):
            known = ", ".join(pack.name for pack in [*packs, *candidates]) or "none"
            raise SelectionError(f"--pack {name!r} matches nothing", hint=f"known packs: {known}")
    return packs + [pack for pack in candidates if not names or any(fnmatchcase(pack.name, n) for n in names)]


def _pack_values(values: Sequence[str]) -> tuple[list[str], list[str]]:
    paths, names = [], []
    for value in values:
        if Path(value).exists():
            paths.append(value)
        elif "/" in value or os.sep in value or value.endswith(".py"):
            raise PackError(
                f"--pack {value!r}: there is no pack directory or file at {Path(value).resolve()}",
                hint="pass an existing directory holding pack.py (or the pack.py itself), or a pack name",
                path=value,
                field="--pack",
            )
        else:
            names.append(value)
    return paths, names


def _named_candidates(settings: Settings, names: Sequence[str], *, loaded: set[str]) -> list[Pack]:
    """The packs --pack names may pick: the project's, then installed ones it does not shadow."""
    wanted = list(names) if names else None  # None: no --pack at all, so every pack is selected
    project = [
        p for p in discover_packs(settings.packs, base=settings.root, wanted=wanted) if p.name not in loaded
    ]
    if not settings.packs or not names:
        return project  # with no packs configured, discover_packs already holds the installed ones
    taken = loaded | {pack.name for pack in project}
    installed = [
        p for p in shadowed(installed_packs(names), taken) if any(fnmatchcase(p.name, n) for n in names)
    ]
    return project + installed


def emit(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    if out.is_dir():
        raise UsageError(
            f"--out {out} is a directory; --out names the report file to write",
            hint="pass a file path, e.g. --out report.txt",
            path=str(out),
        )
    fix = "pass a path in a directory you can write to"
    with os_error_as(UsageError, f"cannot write the report to --out {out}", out, hint=fix):
        write_atomic(out, text)  # the report replaces the file whole, or not at all


def profile_packs(args: argparse.Namespace, settings: Settings) -> list[Pack]:
    """The packs named by --pack (as `wt run` reads it; all candidates when none), then --profile."""
    from windtunnel._tapes.profiles import profile_filter, skipped_by_profile

    packs = selected_packs(args.pack, settings)
    for pack in skipped_by_profile(packs, args.profile):
        print(f"wt: skipped pack {pack.name}: it does not declare profile {args.profile}", file=sys.stderr)  # noqa: T201
    return profile_filter(packs, args.profile)
