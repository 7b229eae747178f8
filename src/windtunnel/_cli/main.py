"""`wt`: parse arguments, call the verb, print Wind Tunnel errors as one clear message (never a traceback).

Faults of the machine rather than of the input (no engine, an engine that went away, a base image that
cannot be made, a full or read-only disk) are one line too, and exit 2 in every verb; anything else
unexpected is one line naming it as Wind Tunnel's bug. `wt --debug VERB` shows the traceback instead.
Stop signals unwind every verb the same way (windtunnel._signals): cleanup runs, the exit code is 128 + the
signal's number, and a second signal exits at once.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from windtunnel import __version__
from windtunnel._cli.verbs import SUMMARIES
from windtunnel._core.vocabulary import Exit
from windtunnel._signals import STOP_SIGNALS, Stopped, exit_code, stop_signals
from windtunnel.errors import HarnessError, UsageError, WindTunnelError

VERB_ORDER: tuple[str, ...] = tuple(SUMMARIES)
"""How `wt --help` lists verbs; each lives in windtunnel._cli.cmd_<verb> and has register(commands)."""

EPILOG = """exit codes: 0 passed; 1 failed (what failed is printed); 2 bad input, or a fault of this machine
(no Docker engine, the engine went away, no base image, a full or read-only disk: one line says which);
130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP after cleaning up (containers, networks, locks; what was
recorded stays, unsigned); a second signal exits at once. `wt certify` also exits 2 for HARNESS_INVALID.
--debug shows the traceback of an error instead of its one line."""
"""The codes are windtunnel._core.vocabulary.Exit's."""
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
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"wt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens underneath")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error instead of its one line"
    )
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
    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in arguments[: arguments.index("--")] if "--" in arguments else "--debug" in arguments
    with stop_signals(() if _own_signals(arguments) else STOP_SIGNALS, until_exit=True):
        try:
            return _run(arguments)
        except KeyboardInterrupt as exc:
            return _stopped(exc)
        except Exception as exc:
            if debug:
                raise
            return _unexpected(exc)


def _run(arguments: list[str]) -> int:
    args = argparse.Namespace()
    try:
        parser = build_parser(requested_verb(arguments, _verbs()))
        args = parser.parse_args(arguments)  # --help and --version exit here, before the imports below
        if not hasattr(args, "handler"):  # bare `wt`: the verb list, as light as --help
            parser.print_help()
            return Exit.USAGE
        import logging

        from windtunnel._config import load_settings

        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="wt: %(message)s")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request drowns what matters
        try:
            code: int = args.handler(args, load_settings())
        except SystemExit as exc:  # only code wt loaded exits this way: never end silently with its code
            raise UsageError(
                f"code wt loaded (a pack, a plugin, a scenario hook) called sys.exit({exc.code!r})",
                hint="raise an exception there instead of exiting; run with --debug to see where",
            ) from exc
        return code
    except WindTunnelError as exc:
        if getattr(args, "debug", False):
            raise
        return _report(exc, getattr(args, HARNESS_EXIT, Exit.FAILED))


def _report(exc: WindTunnelError, harness_exit: int) -> int:
    """Our own errors as one message: usage 2; the machine 2; the harness its verb's code; the rest 1."""
    if isinstance(exc, UsageError):
        print(f"wt: error: {exc}", file=sys.stderr)  # noqa: T201
        return Exit.USAGE
    print(f"wt: {type(exc).__name__}: {exc}", file=sys.stderr)  # noqa: T201
    if isinstance(exc, HarnessError):
        return Exit.ENVIRONMENT if exc.environment else harness_exit
    return Exit.FAILED


def _stopped(exc: KeyboardInterrupt) -> int:
    code = exit_code(exc)
    what = f" by {exc.signal.name}" if isinstance(exc, Stopped) else ""
    print(f"wt: interrupted{what}: stopped after the cleanup (exit {code})", file=sys.stderr)  # noqa: T201
    return code


def _unexpected(exc: Exception) -> int:
    """An exception none of ours: a fault of the machine (one line, exit 2), else a bug (one line, exit 2)."""
    from windtunnel._cli.faults import describe

    message, hint = describe(exc)
    print(f"wt: error: {message}\n  how to fix: {hint}", file=sys.stderr)  # noqa: T201
    return Exit.ENVIRONMENT


def _own_signals(arguments: Sequence[str]) -> bool:
    """`wt gateway serve` and `wt mcp serve` stop their server on a signal themselves."""
    words = [arg for arg in arguments if not arg.startswith("-")]
    return words[:2] in (["gateway", "serve"], ["mcp", "serve"])


if __name__ == "__main__":
    sys.exit(main())
