"""The publish stage: the bundle's result files, the HTML report, and the signature (never when invalid)."""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from windtunnel import __version__
from windtunnel._bundle import (
    ChecksFile,
    HostInfo,
    RunInfo,
    RuntimeInfo,
    SealResult,
    Signer,
    TapeEntry,
    TapeIndex,
    Verdict,
    junit_for,
    layout,
    load_signer,
    seal_bundle,
)
from windtunnel._bundle.privacy_scan import HostFacts
from windtunnel._config import SUITE_VERSION
from windtunnel._core.tiers import GATE_TIERS
from windtunnel._core.vocabulary import CertificationResult
from windtunnel._files import write_atomic
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import CertifyOutcome
from windtunnel._pipeline.costs import runtime_cost
from windtunnel._pipeline.portable import Portable
from windtunnel._report.page import render_bundle_report
from windtunnel._score.pricing import CostSummary
from windtunnel._signals import deferred_stop


@dataclass(frozen=True, slots=True)
class Published:
    verdict: Verdict
    seal: SealResult | None


def _git_commit(root: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def _engine() -> str | None:
    try:
        from windtunnel._engine.docker_env import docker_client, engine_version

        client = docker_client(timeout=5)
        facts = client.version()
        return f"docker {engine_version(client)} ({facts.get('Os', '?')}/{facts.get('Arch', '?')})"
    except Exception:  # noqa: BLE001 - run.json records the engine when one answers; its absence is no error here
        return None


def executor_mode() -> str:
    """How this run reached its containers: from a runner container inside the engine, or from here."""
    from windtunnel._engine.runner_peer import runner_name

    return "container" if runner_name() is not None else "host"


def portable(config: CertifyConfig) -> Portable:
    """How this run's bundle names host paths: relative to the bundle or the project root, never absolute."""
    return Portable(root=config.root, bundle=config.out_dir)


def run_info(
    config: CertifyConfig,
    outcome: CertifyOutcome,
    *,
    engine: bool = True,
    costs: Mapping[str, CostSummary] | None = None,
) -> RunInfo:
    """run.json's content; `engine=False` leaves out asking the engine its version (the early write);
    `costs` are the runtimes' priced selftest runs (windtunnel._pipeline.costs), once they are known.
    Host facts are the OS, the architecture and the engine: no host name, user or absolute path."""
    paths = portable(config)
    images: dict[str, str] = {}
    for run in outcome.runs:
        images.update(run.images)  # "windtunnel" (gateway and mocks) and "runtime:<name>"
    return RunInfo(
        run_id=outcome.run_id,
        tool_version=__version__,
        suite_version=SUITE_VERSION,
        requirement_set=config.requirement_set,
        git_commit=_git_commit(config.root),
        host=HostInfo(
            platform=f"{platform.system()}-{platform.machine()}",
            python=platform.python_version(),
            engine=_engine() if engine else None,
            executor=executor_mode(),
        ),
        started_at=datetime.fromtimestamp(outcome.started_at, UTC),
        ended_at=config.clock(),
        runtimes=[
            RuntimeInfo(
                name=run.name,
                source=paths.text(run.source) if run.source else None,
                model_label=run.model_label,
                cost=(costs or {}).get(run.name),
                stage_seconds=dict(run.stage_seconds),
            )
            for run in outcome.runs
        ],
        images=images,
        swept=outcome.swept,
        tiers=list(config.tiers or GATE_TIERS),
    )


def write_started(config: CertifyConfig, outcome: CertifyOutcome) -> None:
    """run.json before the first stage: it marks the directory as a bundle, also when the run is killed
    (the next run then replaces it), and says when and what started. publish() writes it again."""
    write_atomic(
        config.out_dir / layout.RUN, run_info(config, outcome, engine=False).model_dump_json(indent=2)
    )


def tape_index(config: CertifyConfig) -> TapeIndex:
    """Every tape the tapes stage replayed (recorded in its evidence), with its oldest interaction's time."""
    entries: dict[str, TapeEntry] = {}
    for path in sorted((config.out_dir / layout.EVIDENCE_DIR).glob("*/tapes/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tape = data.get("tape") if isinstance(data, dict) else None
        if isinstance(tape, dict) and "recorded_at" in tape:
            entries[tape["name"]] = TapeEntry.model_validate(portable(config).json(tape))
    return TapeIndex(tapes=list(entries.values()))


def publish(config: CertifyConfig, outcome: CertifyOutcome, *, signer: Signer | None = None) -> Published:
    """The result files and the report; the signature unless HARNESS_INVALID. `signer` is the key loaded
    before the run (`wt certify` loads it first, so a bad key stops it before any stage)."""
    out = config.out_dir
    signer = signer or load_signer(key_path=config.key_path, key_pem=config.key_pem)
    # Priced before the files are made portable, so the cost evidence passes through Portable too.
    costs = {run.name: runtime_cost(out, run, config.pricing) for run in outcome.runs}
    paths = portable(config)
    for path in sorted(out.rglob("*")):  # every stage's files: evidence, traces, proofs
        if path.is_file() and not path.is_symlink():
            paths.rewrite_file(path)
    checks = ChecksFile(
        requirement_set=config.requirement_set,
        checks=[check.model_copy(update={"detail": paths.text(check.detail)}) for check in outcome.checks],
    )
    verdict = Verdict.from_checks(checks, signing_key=signer.origin)
    info = run_info(config, outcome, costs=costs)
    write_atomic(out / layout.RUN, info.model_dump_json(indent=2))
    write_atomic(out / layout.CHECKS, checks.model_dump_json(indent=2))
    write_atomic(out / layout.JUNIT, junit_for(checks))
    write_atomic(out / layout.VERDICT, verdict.model_dump_json(indent=2))
    write_atomic(out / layout.TAPE_INDEX, tape_index(config).model_dump_json(indent=2))
    if config.shard is not None:  # its place in the plan, signed: `wt merge` puts shards together by it
        write_atomic(out / layout.SHARD, config.shard.model_dump_json(indent=2))
    # From the files just written, as `wt report` renders it: the same bundle gives the same page.
    write_atomic(out / layout.REPORT, render_bundle_report(out))
    if verdict.result is CertificationResult.HARNESS_INVALID:
        return Published(verdict=verdict, seal=None)
    host = HostFacts.here(config.root)  # the project's absolute path counts as a host fact too
    with deferred_stop():  # a stop signal waits for the seal: never a half-signed bundle
        sealed = seal_bundle(out, signer=signer, host=host)
    return Published(verdict=verdict, seal=sealed)
