"""`wt report BUNDLE`: (re)render a bundle's report.html, with each check's conversation; `--open` shows it."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import SUMMARIES
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._report.write import write_report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "report",
        help=SUMMARIES["report"],
        description="Render report.html for a certification bundle (its directory or .tar.gz): every check "
        "with its evidence, and the conversation behind each check and selftest case (the model's, the "
        "mocks' and the runtime's view of every tool call, side by side, differences marked). A bundle "
        "directory gets its own report.html, unless the bundle is signed and the page would change (then "
        "pass --out: report.html is a signed file); an archive's report goes beside it as NAME.report.html. "
        "The page is self-contained and loads nothing from the network.",
    )
    parser.add_argument("bundle", type=file_path, metavar="BUNDLE", help="bundle directory or .tar.gz")
    parser.add_argument("--out", type=file_path, metavar="PATH", help="write the report here instead")
    parser.add_argument("--open", action="store_true", help="open the report in the default browser")
    parser.set_defaults(handler=execute_report)


def execute_report(args: argparse.Namespace, _settings: Settings) -> int:
    written = write_report(args.bundle, args.out)
    state = "written" if written.changed else "unchanged"
    sys.stdout.write(f"report {state}: {written.path}\n")
    if args.open and not webbrowser.open(written.path.as_uri()):
        sys.stderr.write(f"wt report: no browser could be started; open {written.path.as_uri()}\n")
    return Exit.OK
