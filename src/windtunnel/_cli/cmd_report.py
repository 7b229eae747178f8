"""`wt report BUNDLE`: (re)render a bundle's report.html, with each check's conversation; `--open` shows it."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from windtunnel._cli.values import file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._report.write import write_report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "report")
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
