"""`wt tapes record`: record tapes by running scenarios through a runtime in containers (see cmd_tapes)."""

from __future__ import annotations

import argparse
import sys
import uuid

from windtunnel._cli.values import file_path, http_url
from windtunnel._cli.verbs import Command
from windtunnel._config import Settings
from windtunnel._gateway.upstream_key import (
    KEY_ENV,
    KEY_FILE_ENV,
    add_key_file_argument,
    upstream_key,
)
from windtunnel._tapes.profiles import profile_filter, skipped_by_profile

API_KEY_ENV = KEY_ENV

RECORD = Command(
    "record tapes: run scenarios through a runtime and promote passing runs' tapes",
    "Run each selected scenario through the runtime in containers with the model gateway in record mode, "
    "score the run with the ordinary runner (provision(), nothing scripted on the runtime's side), and "
    "promote every passing run's tape to a golden tape in <pack>/tapes/<runtime>/ with lineage (runtime, "
    "pack, scenario, the run's verdict, requested and reported models). Older golden tapes of the same "
    "name, or of the same runtime, pack and scenario, are superseded (removed). The upstream is --upstream "
    "URL, any OpenAI-compatible endpoint reached from the gateway container (key from --upstream-key-file "
    f"or ${KEY_FILE_ENV}, else ${API_KEY_ENV} or the variable --api-key-env names; either way it is put "
    "into the gateway container as a read-only file before it starts, never its env or command line), or "
    "--scripted-upstream: a stand-in gateway in script mode that answers with the scenario's golden "
    "reference decisions, for tests and for maintainers without a live model. Only packs that declare the "
    "record profile are recorded. Exit 0 when every run passed and was promoted, 1 otherwise.",
)
"""`wt tapes record`: its summary in `wt tapes --help` and its own description."""


def record_flags(record: argparse.ArgumentParser) -> None:
    """The flags of `wt tapes record`: the runtime, the selection, the upstream and where runs go."""
    record.add_argument(
        "--runtime",
        required=True,
        metavar="NAME|DIR",
        help="a container runtime: a name, a runtime directory, a [tool.windtunnel] runtimes entry or an image",
    )
    record.add_argument(
        "--pack", action="append", default=[], metavar="NAME|PATH", help="pack name, glob or directory"
    )
    record.add_argument(
        "--scenario", action="append", default=[], metavar="NAME", help="scenario name or glob (repeatable)"
    )
    source = record.add_mutually_exclusive_group(required=True)
    source.add_argument("--upstream", type=http_url, metavar="URL", help="OpenAI-compatible base URL (…/v1)")
    source.add_argument(
        "--scripted-upstream",
        action="store_true",
        help="record against a stand-in gateway in script mode holding the scenario's golden decisions",
    )
    record.add_argument("--api-key-env", default=API_KEY_ENV, metavar="VAR")
    add_key_file_argument(record)
    record.add_argument("--model", metavar="NAME", help="the model name the runtime asks for")
    record.add_argument(
        "--out", type=file_path, metavar="DIR", help="traces, scores and run tapes (default runs/tapes)"
    )
    record.add_argument("--no-promote", action="store_true", help="write run tapes only; promote nothing")


def execute_record(args: argparse.Namespace, settings: Settings) -> int:
    from windtunnel._cli.common import profile_packs
    from windtunnel._runner.lifecycle import open_runtime
    from windtunnel._runtimes.resolve import resolve_runtime
    from windtunnel._tape_runs.recording import (
        RecordOptions,
        error_text,
        record_tapes,
        recording_runtime,
        selected_scenarios,
    )

    args.profile = None
    description = resolve_runtime(args.runtime, settings)  # a bad name stops it before anything is built
    packs = profile_packs(args, settings)
    for pack in skipped_by_profile(packs, "record"):
        print(f"wt: skipped pack {pack.name}: it does not declare profile record", file=sys.stderr)  # noqa: T201
    items = selected_scenarios(profile_filter(packs, "record"), args.scenario)
    options = RecordOptions(
        runtime=description.name,
        out_dir=(args.out or settings.runs_dir / "tapes").resolve(),
        upstream=args.upstream,
        api_key=upstream_key(settings.env, given=args.upstream_key_file, key_env=args.api_key_env)
        if args.upstream
        else None,
        model=args.model,
        promote=not args.no_promote,
    )

    def progress(line: str) -> None:
        print(f"wt tapes record: {line}", file=sys.stderr, flush=True)  # noqa: T201

    progress(f"building the images of {description.name} ({description.source})")
    label = f"record-{uuid.uuid4().hex[:10]}"
    with open_runtime(description, lock_dir=settings.lock_dir, label=label) as opened:
        runtime = recording_runtime(opened)
        opened.pre_run([scenario for _pack, scenario in items])
        recorded = record_tapes(runtime, items, options, progress=progress)
    failed = 0
    for one in recorded:
        problem = error_text(one)
        failed += problem is not None
        where = f"{one.pack}/{one.scenario}"
        if problem is not None:
            print(f"FAILED {where}: {problem}")  # noqa: T201
            continue
        target = one.golden or one.run_tape
        verb = "promoted" if one.created else "unchanged" if one.golden else "recorded"
        print(f"OK     {where}: {verb} {target}")  # noqa: T201
        for old in one.superseded:
            print(f"       superseded {old}")  # noqa: T201
    return 1 if failed else 0
