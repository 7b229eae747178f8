"""`wt gateway serve`: the OpenAI-compatible model gateway, in script, live, record or replay mode."""

from __future__ import annotations

import argparse

from windtunnel._chat.mode import GatewayMode
from windtunnel._cli.values import file_path, http_url, model_name, port
from windtunnel._cli.verbs import Command, VerbGroup
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._gateway.upstream_key import KEY_ENV, KEY_FILE_ENV, add_key_file_argument, upstream_key
from windtunnel._net.listen import announce, listen_tcp
from windtunnel.errors import UsageError

DEFAULT_MODEL = "wt-model"


COMMANDS = {
    "serve": Command(
        "serve the gateway until interrupted",
        "Serve POST /v1/chat/completions (JSON and SSE) and GET /v1/models, plus the admin API "
        "under /wt/ (script, log, health, tape). script mode answers only from reference decisions installed "
        "with PUT /wt/script and refuses every other call; live mode proxies to --upstream with the key "
        f"from --upstream-key-file (or ${KEY_FILE_ENV}), else ${KEY_ENV} (never logged); record mode proxies "
        "the same way and writes a tape to --tape-out (on POST /wt/tape/flush, else at shutdown); replay mode "
        "answers only from --tape, fails closed and reports what it consumed on GET /wt/tape. Prints its "
        "address on stderr once listening; stops on SIGINT or SIGTERM. Exit 0 when it stopped cleanly, 1 "
        "when the tape failed at shutdown (record mode with nothing recorded, or --strict replay with "
        "interactions never requested).",
    )
}
"""`wt gateway`'s commands: each one's summary in `wt gateway --help` and its own description."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = VerbGroup(commands, "gateway", COMMANDS).add("serve", execute_serve)
    serve.add_argument(
        "--mode", choices=("script", "live", "record", "replay"), default="script", help="default: script"
    )
    serve.add_argument(
        "--upstream",
        type=http_url,
        metavar="URL",
        help="live and record modes: OpenAI-compatible base URL, e.g. http://host:11434/v1",
    )
    serve.add_argument("--tape", type=file_path, metavar="PATH", help="replay mode: the tape to serve")
    serve.add_argument(
        "--strict",
        action="store_true",
        help="replay mode: fail at shutdown when recorded interactions were never requested",
    )
    serve.add_argument(
        "--certification",
        action="store_true",
        help="replay mode: refuse a stale tape (older than 30 days) instead of warning",
    )
    serve.add_argument(
        "--tape-out", type=file_path, metavar="PATH", help="record mode: where the tape is written"
    )
    serve.add_argument(
        "--tape-name", metavar="NAME", help="record mode: the tape's name (default: the --tape-out stem)"
    )
    serve.add_argument(
        "--source-run",
        metavar="ID",
        help="record mode: the id of the run being recorded (`wt tapes promote` then needs that run's score)",
    )
    for flag in ("runtime", "pack", "scenario"):
        serve.add_argument(
            f"--{flag}",
            dest=f"lineage_{flag}",
            metavar="NAME",
            help=f"record mode: the {flag} of the run being recorded, named in the tape's lineage "
            "(`wt tapes promote` refuses a score of another)",
        )
    add_key_file_argument(
        serve, what="the upstream API key (live and record; replay only redacts it from requests)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=port, default=8000, help="port to listen on; 0 picks a free one")
    serve.add_argument(
        "--model",
        dest="models",
        action="extend",
        nargs="+",
        default=[],
        metavar="NAME",
        help=f"model names GET /v1/models lists (repeatable; default {DEFAULT_MODEL})",
    )
    serve.add_argument(
        "--side-model",
        dest="side_models",
        action="append",
        default=[],
        type=model_name,
        metavar="NAME",
        help="a model name whose calls are side traffic (titles, summaries, token counts), answered beside "
        "the script without consuming a scripted decision (repeatable; PUT /wt/side changes the set)",
    )


def execute_serve(args: argparse.Namespace, settings: Settings) -> int:
    from windtunnel._gateway.app import create_app
    from windtunnel._gateway.serve import serve
    from windtunnel._limits import max_body_bytes

    limit = max_body_bytes(settings.env)  # a bad WT_MAX_BODY_BYTES stops it before it listens
    mode = _mode(args, settings)
    models = args.models or [DEFAULT_MODEL]
    app = create_app(mode, models=models, max_body_bytes=limit, side_models=args.side_models)
    sock = listen_tcp(args.host, args.port)
    announce(sock, f"model gateway ({mode.name} mode, models {', '.join(models)})", "/v1")
    serve(app, sock)
    failed = app.state.gateway.shutdown_error
    if failed is not None:
        raise failed  # the tape failed at shutdown: printed as one message by `wt`, exit 1
    return Exit.OK


def _mode(args: argparse.Namespace, settings: Settings) -> GatewayMode:
    _refuse_foreign_flags(args)
    if args.mode == "replay":
        return _replay(args, settings)
    if args.mode == "script":
        if args.upstream or args.upstream_key_file:
            flag = "--upstream" if args.upstream else "--upstream-key-file"
            raise UsageError(
                f"{flag} does not apply to script mode: script mode never calls a model",
                hint=f"drop {flag}, or pass --mode live (or record)",
                field=flag,
            )
        from windtunnel._gateway.script import ScriptMode

        return ScriptMode()
    _needs(
        args.upstream,
        args.mode,
        "--upstream",
        "the OpenAI-compatible base URL to proxy to",
        hint=f"pass e.g. --upstream http://127.0.0.1:11434/v1 and the key with --upstream-key-file or ${KEY_ENV}",
    )
    if args.mode == "record":
        return _record(args, settings)
    from windtunnel._gateway.live import LiveMode

    return LiveMode(args.upstream, api_key=_key(args, settings))


def _key(args: argparse.Namespace, settings: Settings) -> str | None:
    return upstream_key(settings.env, given=args.upstream_key_file)


_MODE_FLAGS = {
    "tape": ("--tape", "replay"),
    "strict": ("--strict", "replay"),
    "certification": ("--certification", "replay"),
    "tape_out": ("--tape-out", "record"),
    "tape_name": ("--tape-name", "record"),
    "source_run": ("--source-run", "record"),
    "lineage_runtime": ("--runtime", "record"),
    "lineage_pack": ("--pack", "record"),
    "lineage_scenario": ("--scenario", "record"),
}


def _refuse_foreign_flags(args: argparse.Namespace) -> None:
    """A flag of another mode is a mistake (a replay flag on a record gateway would silently do nothing)."""
    for dest, (flag, mode) in _MODE_FLAGS.items():
        if getattr(args, dest) and args.mode != mode:
            raise UsageError(
                f"{flag} applies to {mode} mode only, and the gateway runs in {args.mode} mode",
                hint=f"drop {flag}, or pass --mode {mode}",
                field=flag,
            )


def _needs(value: object, mode: str, flag: str, what: str, *, hint: str) -> None:
    """A flag `mode` cannot run without: missing, it is a usage error naming the flag and what it gives."""
    if not value:
        raise UsageError(f"{mode} mode needs {flag}: {what}", hint=hint, field=flag)


def _replay(args: argparse.Namespace, settings: Settings) -> GatewayMode:
    _needs(
        args.tape,
        "replay",
        "--tape",
        "the tape to answer from",
        hint="pass --tape path/to/tape.jsonl (`wt tapes list` shows the committed tapes)",
    )
    if args.upstream:
        raise UsageError(
            "--upstream does not apply to replay mode: replay never calls a model",
            hint="drop --upstream",
            field="--upstream",
        )
    from windtunnel._tapes.replay import ReplayMode

    key = _key(args, settings)
    return ReplayMode(
        args.tape, strict=args.strict, certification=args.certification, known_secrets=[key] if key else ()
    )


def _record(args: argparse.Namespace, settings: Settings) -> GatewayMode:
    _needs(
        args.tape_out,
        "record",
        "--tape-out",
        "where the tape is written",
        hint="pass --tape-out runs/tapes/NAME.jsonl",
    )
    from windtunnel._tapes.record import RecordMode

    return RecordMode(
        upstream=args.upstream,
        api_key=_key(args, settings),
        tape_path=args.tape_out,
        tape_name=args.tape_name,
        source_run=args.source_run,
        lineage={
            "runtime": args.lineage_runtime,
            "pack": args.lineage_pack,
            "scenario": args.lineage_scenario,
        },
    )
