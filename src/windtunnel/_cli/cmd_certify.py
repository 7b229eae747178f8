"""`wt certify`: the whole pipeline for the configured runtimes, ending in a signed bundle."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from windtunnel._bundle import Signer, load_signer
from windtunnel._bundle.keys import fingerprint_of
from windtunnel._cli.common import RUNTIME_FORMS, add_tier
from windtunnel._cli.values import count, file_path
from windtunnel._cli.verbs import add_verb
from windtunnel._config import Settings, default_control_cache_dir
from windtunnel._core.tiers import certify_tiers
from windtunnel._core.vocabulary import CERTIFY_EXIT, CertificationResult, Exit
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.executor_mode import MODES, choose, in_container, runner_flags
from windtunnel._pipeline.outdir import out_lock, prepare_out_dir
from windtunnel._pipeline.plan import PLAN, execute
from windtunnel._pipeline.publish import Published, publish
from windtunnel._pipeline.sharding import certify_plan, parse_shard, shard_config
from windtunnel._pipeline.summary import summary_table
from windtunnel.errors import EngineUnavailableError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_verb(commands, "certify")
    parser.add_argument(
        "--runtime",
        action="append",
        default=[],
        metavar="NAME|DIR",
        help=f"runtime to certify (repeatable): {RUNTIME_FORMS}",
    )
    parser.add_argument(
        "--out", type=file_path, default=Path("out"), metavar="DIR", help="bundle directory (default out/)"
    )
    parser.add_argument(
        "--fail-fast", action="store_true", help="stop a runtime's stages at its first failing stage"
    )
    parser.add_argument("--key", type=file_path, metavar="PATH", help="signing key (PKCS#8 PEM, ECDSA P-256)")
    add_tier(parser)  # certify gates on smoke + stable; --tier quarantined adds cases that never gate
    parser.add_argument(
        "--executor",
        choices=MODES,
        default="auto",
        help="how the checks reach the containers: host (from this process), container (from a runner "
        "container inside the engine: a remote DOCKER_HOST, Docker Desktop, docker:dind), or auto (default: "
        "host when a probe container's address is reachable from here, else container)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="run the reference control's selftest afresh instead of reusing its result from an earlier run "
        "with the same inputs (kept in ~/.cache/windtunnel/control; docs/design.md)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="certify only the I-th of N parts of the plan (and the reference control), for `wt merge` to put "
        "back together; every job computes the same split (docs/ci.md)",
    )
    parser.add_argument(
        "--print-plan",
        nargs="?",
        const=1,
        type=count,
        metavar="N",
        help="print the plan as JSON (its digest and each of N shards' part, default 1) and run nothing",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--plain",
        action="store_true",
        help="plain progress lines on stderr even on a terminal (the default when stdout is not one)",
    )
    shown.add_argument(
        "--json",
        action="store_true",
        help="one JSON event per line on stdout (note, stage_started, check, stage_finished, verdict) and "
        "nothing else there, for tools",
    )
    parser.set_defaults(
        handler=execute_certify, harness_exit=CERTIFY_EXIT[CertificationResult.HARNESS_INVALID]
    )


def execute_certify(args: argparse.Namespace, settings: Settings) -> int:
    shard = parse_shard(args.shard) if args.shard is not None else None
    if args.print_plan is not None:  # nothing runs, so --out is neither locked nor touched
        plan = certify_plan(_config(args, settings), args.print_plan)
        print(plan.model_dump_json(indent=2))  # noqa: T201
        return Exit.OK
    # First, before the key or the runtimes: --out is locked and checked (only a bundle Wind Tunnel wrote
    # is replaced), and an earlier bundle must not outlive a run that stops on a bad flag.
    with out_lock(args.out):
        for line in prepare_out_dir(args.out):
            _progress(f"removed {line}")
        config = _config(args, settings)
        config = shard_config(config, *shard) if shard is not None else config
        signer = load_signer(key_path=config.key_path, key_pem=config.key_pem)  # a bad key stops it here
        view = "json" if args.json else "plain" if args.plain else "auto"
        from windtunnel._drivers.container_plugin import DriverSettings  # not at import: it loads the engine

        driver = DriverSettings.from_env(settings.env)  # read once, for the images built on this side
        if choose(args.executor, _progress, settings.env, driver) == "container":
            flags = runner_flags(args.fail_fast, args.tier, no_cache=args.no_cache, json=args.json)
            flags += ["--shard", args.shard] if shard is not None else []  # the runner splits the same plan
            return in_container(config, driver, runtimes=tuple(args.runtime), flags=flags, progress=_progress)
        return _certify(config, signer, view)


def _config(args: argparse.Namespace, settings: Settings) -> CertifyConfig:
    return CertifyConfig.from_settings(
        settings,
        runtimes=tuple(args.runtime),
        out_dir=args.out.resolve(),
        fail_fast=args.fail_fast,
        key_path=args.key,
        tiers=certify_tiers(args.tier),
        control_cache=None if args.no_cache else default_control_cache_dir(),
    )


def _certify(config: CertifyConfig, signer: Signer, mode: str) -> int:
    from windtunnel._cli.progress import make_view

    names = [d.name for d in config.descriptions()]
    view = make_view(mode, [(name, step.stage.value) for name in names for step in PLAN])
    view.note(f"runtimes {', '.join(names)}; bundle in {config.out_dir}; signing key: {signer.origin.value}")
    try:
        outcome = execute(PLAN, config, DockerExecutor(), progress=view.note, events=view.event)
        published = publish(config, outcome, signer=signer)
    except (KeyboardInterrupt, EngineUnavailableError, OSError):
        view.note(f"stopped: what was recorded so far stays in {config.out_dir}, unsigned")
        raise
    finally:
        view.close()
    view.report(summary_table(outcome, published.verdict), _verdict(config, published))
    return CERTIFY_EXIT[published.verdict.result]


def _verdict(config: CertifyConfig, published: Published) -> dict[str, Any]:
    """The verdict as --json reports it, and as `lines` the text every other view prints."""
    verdict = published.verdict
    fields: dict[str, Any] = {
        "result": verdict.result.value,
        "exit": int(CERTIFY_EXIT[verdict.result]),
        "runtimes": {r.name: r.result.value for r in verdict.runtimes},
        "bundle": str(config.out_dir),
    }
    seal = published.seal
    if seal is None:
        return {**fields, "signed": None, "lines": ["HARNESS_INVALID: nothing was signed\n"]}
    dev = " (unverified dev key: it proves integrity, not who signed)" if seal.dev_key else ""
    fingerprint = fingerprint_of(seal.keyid)
    # The pinned form: the fingerprint comes from this run, not from the bundle a verifier is handed.
    verify = f"wt verify {config.out_dir} --key-fingerprint {fingerprint}"
    lines = [f"signed{dev}: {seal.archive}\n", f"signer: {fingerprint}\n", f"verify: {verify}\n"]
    signed = {"archive": str(seal.archive), "signer": fingerprint, "dev_key": seal.dev_key}
    return {**fields, "signed": signed, "verify": verify, "lines": lines}


def _progress(line: str) -> None:
    sys.stderr.write(f"wt certify: {line}\n")
    sys.stderr.flush()
