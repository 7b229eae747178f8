"""Flags and helpers shared by verbs: selection, output format, pack loading, writing results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from windtunnel._config import Settings
from windtunnel._packs.loader import discover_packs, load_pack
from windtunnel._packs.pack import Pack
from windtunnel._packs.selection import Selected, Selection, select


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
        help="pack name or glob; a path to a pack directory also loads that pack",
    )
    group.add_argument("--owner", action="append", default=[], metavar="OWNER", help="scenario owner or glob")


def add_output(parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("text", "json", "junit")) -> None:
    parser.add_argument("--format", choices=formats, default="text", help="report format (default: text)")
    parser.add_argument("--out", type=Path, metavar="PATH", help="write the report here instead of stdout")


def selected_scenarios(args: argparse.Namespace, settings: Settings) -> list[Selected]:
    """Load the packs (config, or the paths given to --pack) and apply the selection."""
    paths = [value for value in args.pack if Path(value).exists()]
    names = [value for value in args.pack if not Path(value).exists()]
    packs: list[Pack] = [load_pack(str(Path(value).resolve())) for value in paths]
    if not paths or names:
        loaded = {pack.name for pack in packs}
        packs += [
            pack for pack in discover_packs(settings.packs, base=settings.root) if pack.name not in loaded
        ]
    pack_names = names + [pack.name for pack in packs if any(Path(p).resolve() == pack.root for p in paths)]
    selection = Selection(scenarios=args.scenario, tags=args.tag, packs=pack_names, owners=args.owner)
    return select(packs, selection)


def emit(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
