"""`wt tapes list|verify|promote|rerecord`: the lifecycle of the committed tapes under each pack's tapes/."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from windtunnel._cli.common import profile_packs
from windtunnel._cli.tapes_record import RECORD, execute_record, record_flags
from windtunnel._cli.values import days, file_path, http_url
from windtunnel._cli.verbs import Command, VerbGroup
from windtunnel._config import Settings
from windtunnel._core.vocabulary import Exit
from windtunnel._gateway.upstream_key import KEY_ENV, add_key_file_argument, upstream_key
from windtunnel._tapes.lifecycle import (
    EXPIRING_WITHIN,
    TapeCheck,
    TapeFile,
    find_tapes,
    propose_refreshes,
    verify_tapes,
)
from windtunnel._tapes.profiles import add_profile_argument
from windtunnel.errors import UsageError

API_KEY_ENV = KEY_ENV


COMMANDS = {
    "list": Command(
        "list the committed tapes of the selected packs",
        "List every tape under the selected packs' tapes/ directories with its size and age, marking stale "
        "tapes and warning (on stderr) about tapes that go stale within --expiring-within days. Always "
        "exits 0.",
    ),
    "verify": Command(
        "check every committed tape: format, secrets, fingerprints, golden names, staleness",
        "Load every tape under the selected packs' tapes/ directories (or the PATHs given) and check its "
        "format, that it holds no secret, that stored fingerprints equal the ones recomputed from the "
        "recorded requests, that a golden tape's name matches its sha256, that replaying its own requests "
        "through replay mode answers each once and in order, and that it is not stale (oldest interaction "
        "older than 30 days); a tape that goes stale within --expiring-within days is a warning. Committed "
        "tapes must sit in <pack>/tapes/<runtime>/, where the tape stage finds them. Exit 0 when every "
        "tape passes (also when there are none, which is reported), 1 otherwise. Replaying tapes through "
        "a runtime is the certify stage.",
    ),
    "promote": Command(
        "promote a passing run's tape to an immutable golden tape",
        "Copy RUN_TAPE into DIR as <tape>-<sha256>.jsonl with lineage (source run, promoted_at), and remove "
        "older golden tapes in DIR of the same tape name or the same runtime, pack and scenario. Refused "
        "unless every --score sidecar passed and the scores are of the run that recorded the tape: their "
        "run ids, runtime, pack and scenario must be the ones the tape's lineage names. Never overwrites; "
        "promoting the same recording again reports the existing golden tape.",
    ),
    "rerecord": Command(
        "propose refreshes of stale tapes, or re-record one tape against an upstream",
        "Without --tape: list the stale tapes of the selected packs, and those that go stale within "
        "--expiring-within days, and print, for each, the command that re-records it; nothing is contacted "
        "and nothing runs, so this also works in CI. With --tape and --upstream: send the tape's recorded "
        "requests in order to the upstream through record mode and write a run tape to --out (the key is "
        "read from --upstream-key-file, or the variable named by --api-key-env, default "
        f"{API_KEY_ENV}); promote it after a passing run. Re-recording refuses to run when the CI variable "
        "is set, unless --force.",
    ),
    "record": RECORD,
}
"""`wt tapes`' commands, in `wt tapes --help` order: each one's summary there and its own description."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = VerbGroup(commands, "tapes", COMMANDS)
    _list(group.add("list", execute_list))
    _verify(group.add("verify", execute_verify))
    _promote(group.add("promote", execute_promote))
    _rerecord(group.add("rerecord", execute_rerecord))
    record_flags(group.add("record", execute_record))


def _tape_flags(parser: argparse.ArgumentParser) -> None:
    """Which packs' tapes (--pack, --profile) and how far ahead staleness warns (--expiring-within)."""
    parser.add_argument(
        "--pack", action="append", default=[], metavar="NAME|PATH", help="pack name, glob or directory"
    )
    add_profile_argument(parser)
    parser.add_argument(
        "--expiring-within",
        type=days,
        default=EXPIRING_WITHIN,
        metavar="DAYS",
        help=f"warn about tapes that go stale within DAYS days (default {EXPIRING_WITHIN.days})",
    )


def _list(parser: argparse.ArgumentParser) -> None:
    _tape_flags(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=file_path, metavar="PATH", help="tape files or directories")
    _tape_flags(parser)
    parser.add_argument(
        "--development",
        action="store_true",
        help="report stale tapes as warnings instead of failures (certification mode, the default, fails)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _promote(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_tape", type=file_path, metavar="RUN_TAPE")
    parser.add_argument("--to", required=True, type=file_path, metavar="PACK_DIR/tapes/")
    parser.add_argument(
        "--score",
        action="append",
        default=[],
        type=file_path,
        metavar="FILE",
        required=True,
        help="score sidecar(s) of the run that recorded the tape; all must have passed",
    )


def _rerecord(parser: argparse.ArgumentParser) -> None:
    _tape_flags(parser)
    parser.add_argument("--all", action="store_true", help="propose every tape, not only stale ones")
    parser.add_argument("--tape", type=file_path, metavar="PATH", help="the tape to re-record")
    parser.add_argument("--upstream", type=http_url, metavar="URL", help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--api-key-env", default=API_KEY_ENV, metavar="VAR")
    add_key_file_argument(parser)
    parser.add_argument(
        "--out", type=file_path, metavar="DIR", help="where the run tape goes (default runs/tapes)"
    )
    parser.add_argument(
        "--force", action="store_true", help="re-record (--tape) even when CI is set; listing never needs it"
    )


def _files(args: argparse.Namespace, settings: Settings) -> list[TapeFile]:
    if not getattr(args, "paths", None):
        return find_tapes(profile_packs(args, settings))
    files: list[TapeFile] = []
    for path in args.paths:
        found = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
        files += [TapeFile(item) for item in found]
    return files


def execute_list(args: argparse.Namespace, settings: Settings) -> int:
    checks = verify_tapes(_files(args, settings), certification=False, expiring_within=args.expiring_within)
    if args.format == "json":
        print(json.dumps([_as_json(check) for check in checks], indent=2))  # noqa: T201
        return Exit.OK
    for check in checks:
        tape = check.tape
        summary = (
            f"{len(tape.interactions)} interaction(s), recorded {tape.oldest:%Y-%m-%d}"
            + (", STALE" if check.stale else ", EXPIRING SOON" if check.expiring else "")
            if tape is not None
            else check.problems[0].splitlines()[0]
        )
        print(f"{check.file.pack or '-':16} {check.file.path}  {summary}")  # noqa: T201
    for check in checks:
        for warning in check.warnings:
            print(f"wt: warning: {warning}", file=sys.stderr)  # noqa: T201
    print(f"{len(checks)} tape(s)")  # noqa: T201
    return Exit.OK


def execute_verify(args: argparse.Namespace, settings: Settings) -> int:
    files = _files(args, settings)
    checks = verify_tapes(files, certification=not args.development, expiring_within=args.expiring_within)
    if args.format == "json":
        print(json.dumps([_as_json(check) for check in checks], indent=2))  # noqa: T201
    else:
        _print_checks(checks)
    return Exit.OK if all(check.ok for check in checks) else Exit.FAILED


def _print_checks(checks: list[TapeCheck]) -> None:
    if not checks:
        print("wt: no committed tapes found: nothing to verify")  # noqa: T201
        return
    for check in checks:
        count = f" ({len(check.tape.interactions)} interactions)" if check.tape else ""
        print(f"{'OK' if check.ok else 'FAILED':7} {check.file.path}{count}")  # noqa: T201
        for line in (*check.problems, *(f"warning: {w}" for w in check.warnings)):
            print("        " + line.replace("\n", "\n        "))  # noqa: T201
    failed = sum(not check.ok for check in checks)
    print(f"{len(checks)} tape(s) verified, {failed} failed")  # noqa: T201


def _as_json(check: TapeCheck) -> dict[str, Any]:
    tape = check.tape
    return {
        "path": str(check.file.path),
        "pack": check.file.pack,
        "ok": check.ok,
        "tape": tape.name if tape else None,
        "interactions": len(tape.interactions) if tape else None,
        "oldest": tape.oldest.isoformat() if tape else None,
        "stale": check.stale,
        "expires_at": check.expires_at.isoformat() if check.expires_at else None,
        "expiring": check.expiring,
        "problems": check.problems,
        "warnings": check.warnings,
    }


def execute_promote(args: argparse.Namespace, _settings: Settings) -> int:
    from windtunnel._tapes.promotion import promote, read_scores

    result = promote(args.run_tape, args.to, scores=read_scores(args.score))
    verb = "promoted" if result.created else "already promoted, unchanged:"
    print(f"wt: {verb} {args.run_tape} -> {result.path}")  # noqa: T201
    for old in result.superseded:
        print(f"wt: superseded {old}")  # noqa: T201
    return Exit.OK


def execute_rerecord(args: argparse.Namespace, settings: Settings) -> int:
    if args.tape is None:
        return _propose(args, settings)  # read-only: allowed in CI
    ci = (settings.env_value("CI") or "").strip().lower()
    if ci not in ("", "0", "false", "no") and not args.force:
        raise UsageError(
            "wt tapes rerecord --tape does not run in CI by itself (the CI variable is set)",
            hint="re-record on a developer machine, or pass --force if this CI job is meant to; "
            "listing the proposals (without --tape) works in CI",
            field="CI",
        )
    if not args.upstream:
        raise UsageError("--tape needs --upstream URL", hint="pass the OpenAI-compatible base URL, e.g. …/v1")
    from windtunnel._tapes.rerecord import rerecord  # imports httpx: only when re-recording

    out = args.out or settings.runs_dir / "tapes"
    api_key = upstream_key(settings.env, given=args.upstream_key_file, key_env=args.api_key_env)
    tape = asyncio.run(rerecord(args.tape, upstream=args.upstream, api_key=api_key, out_dir=out))
    print(  # noqa: T201
        f"wt: re-recorded {len(tape.interactions)} interaction(s) to {tape.path}\n"
        f"wt: run the scenario against it in the replay profile; when it passes, promote it:\n"
        f"  wt tapes promote {tape.path} --to {args.tape.parent} --score RUN_DIR/<case>.score.json"
    )
    return Exit.OK


def _propose(args: argparse.Namespace, settings: Settings) -> int:
    checks = verify_tapes(_files(args, settings), certification=False, expiring_within=args.expiring_within)
    proposals = propose_refreshes(checks, include_fresh=args.all)
    if not proposals:
        what = "" if args.all else "stale or expiring "
        print(f"wt: no {what}tapes among {len(checks)}; nothing to re-record")  # noqa: T201
    for proposal in proposals:
        print(f"# {proposal.path} ({proposal.reason})\n{proposal.command}")  # noqa: T201
    return Exit.OK
