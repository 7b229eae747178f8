"""`wt`: parse arguments, call the verb, print Wind Tunnel errors as one clear message (never a traceback)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from windtunnel import __version__
from windtunnel._cli.verbs import SUMMARIES
from windtunnel._core.vocabulary import Exit
from windtunnel.errors import HarnessError, UsageError, WindTunnelError

VERB_ORDER: tuple[str, ...] = tuple(SUMMARIES)
"""How `wt --help` lists verbs; each lives in windtunnel._cli.cmd_<verb> and has register(commands)."""

HARNESS_EXIT = "harness_exit"
"""A verb may `set_defaults(harness_exit=N)`: its exit code when Wind Tunnel's own machinery fails
(HarnessError: no engine, an image build, sealing the bundle). `wt certify` documents 2 (harness invalid);
verbs that do not say exit 1. Every code is windtunnel._core.vocabulary.Exit's."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}", hint=f"see `{self.prog} --help`")


def _verbs() -> list[str]:
    """Verb modules present in this package, in VERB_ORDER first, then any others by name."""
    import pkgutil

    from windtunnel import _cli

    present = {m.name[4:] for m in pkgutil.iter_modules(_cli.__path__) if m.name.startswith("cmd_")}
    return [v for v in VERB_ORDER if v in present] + sorted(present - set(VERB_ORDER))


def requested_verb(argv: Sequence[str], verbs: Sequence[str]) -> str | None:
    """The verb `argv` names, when it names a known one (the top-level options take no values)."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in verbs else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `wt` parser with `only` that verb's full parser, or with every verb listed by its summary: a verb
    module imports what it needs at the top, so `wt --help` and `wt --version` import none of them, and a
    container's `wt gateway serve` or `wt mcp serve` does not pay for the others."""
    parser = _Parser(
        prog="wt",
        description="Wind Tunnel certifies the plumbing of agent test harnesses.",
    )
    parser.add_argument("--version", action="version", version=f"wt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens underneath")
    commands = parser.add_subparsers(title="verbs", metavar="VERB", parser_class=_Parser)
    if only is not None:
        importlib.import_module(f"windtunnel._cli.cmd_{only}").register(commands)
        return parser
    for verb in _verbs():
        if verb in SUMMARIES:  # listed, not built: naming it re-parses with its own parser
            commands.add_parser(verb, help=SUMMARIES[verb], add_help=False)
        else:
            importlib.import_module(f"windtunnel._cli.cmd_{verb}").register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = argparse.Namespace()
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser(requested_verb(arguments, _verbs()))
        args = parser.parse_args(arguments)  # --help and --version exit here, before the imports below
        import logging

        from windtunnel._config import load_settings

        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="wt: %(message)s")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request drowns what matters
        if not hasattr(args, "handler"):
            parser.print_help()
            return Exit.USAGE
        code: int = args.handler(args, load_settings())
        return code
    except UsageError as exc:
        print(f"wt: error: {exc}", file=sys.stderr)  # noqa: T201
        return Exit.USAGE
    except HarnessError as exc:
        print(f"wt: {type(exc).__name__}: {exc}", file=sys.stderr)  # noqa: T201
        harness_exit: int = getattr(args, HARNESS_EXIT, Exit.FAILED)
        return harness_exit
    except WindTunnelError as exc:
        print(f"wt: {type(exc).__name__}: {exc}", file=sys.stderr)  # noqa: T201
        return Exit.FAILED
    except KeyboardInterrupt:
        print("wt: interrupted", file=sys.stderr)  # noqa: T201
        return Exit.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
