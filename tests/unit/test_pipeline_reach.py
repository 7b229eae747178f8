"""certify's record of what a runtime tried to reach: evidence `publish/reach.json` and an unscored INFO check.

The runtime here hands over a record counted by windtunnel._engine.fence_log from holder events; the
integration test tests/integration/test_egress_fence.py makes real containers produce such events."""

from __future__ import annotations

import json
from pathlib import Path

from windtunnel._bundle.models import Stage
from windtunnel._conformance.suite import Suite
from windtunnel._core.abilities import ReachAttempt, ReachRecordingRuntime
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._engine.fence_log import attempts_of
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import RuntimeRun, StageContext
from windtunnel._pipeline.stages import REACH_LINES_SHOWN, reach_record

REPO = Path(__file__).resolve().parents[2]


class RecordingRuntime:
    """A runtime whose fences recorded `events` (holder log lines, as the netguard agent writes them)."""

    def __init__(self, events: list[dict[str, object]]) -> None:
        self.events = events

    def reach_attempts(self) -> tuple[ReachAttempt, ...]:
        return tuple(attempts_of(self.events, {"172.30.0.1": "the host"}))


def context(tmp_path: Path, runtime: object) -> StageContext:
    config = CertifyConfig(
        runtimes=(),
        pack_refs=(),
        root=REPO,
        out_dir=tmp_path / "bundle",
        suite_dir=REPO / "conformance",
    )
    run = RuntimeRun(name="reference")
    run.reach = runtime if isinstance(runtime, ReachRecordingRuntime) else None
    return StageContext(
        config=config,
        suite=Suite.load(config.suite_dir),
        selected=[],
        run=run,
        stage=Stage.PUBLISH,
        run_id="certify-test",
    )


def test_refused_names_and_blocked_connections_are_evidence_and_listed(tmp_path: Path) -> None:
    events: list[dict[str, object]] = [
        {"event": "dns", "name": "api.anthropic.com", "qtype": "A"},
        {"event": "dns", "name": "api.anthropic.com", "qtype": "AAAA"},
        {"event": "blocked", "destination": "172.30.0.1", "port": 2375, "protocol": "tcp", "uid": 1000},
    ]
    ctx = context(tmp_path, RecordingRuntime(events))
    reach_record(ctx)
    (check,) = ctx.run.checks
    assert check.id == "reference/publish/reach" and check.status is CheckStatus.INFO and not check.scored
    assert check.detail == (
        "tried to reach api.anthropic.com: 2 lookups (A, AAAA), refused; "
        "tried to reach 172.30.0.1:2375/tcp (the host): 1 packet, blocked"
    )
    evidence = json.loads((ctx.bundle / check.evidence[0]).read_text())
    assert check.evidence == ["evidence/reference/publish/reach.json"]
    assert evidence["attempts"][0] == {
        "kind": "lookup",
        "target": "api.anthropic.com",
        "protocol": "dns",
        "count": 2,
        "port": None,
        "detail": "A, AAAA",
    }
    assert evidence["attempts"][1]["port"] == 2375 and len(evidence["lines"]) == 2


def test_a_runtime_that_tried_nothing_says_so_and_a_long_list_points_to_the_evidence(tmp_path: Path) -> None:
    quiet = context(tmp_path / "quiet", RecordingRuntime([]))
    reach_record(quiet)
    assert quiet.run.checks[0].detail == "tried to reach nothing outside its peers"
    names: list[dict[str, object]] = [
        {"event": "dns", "name": f"host{i}.example", "qtype": "A"} for i in range(REACH_LINES_SHOWN + 3)
    ]
    busy = context(tmp_path / "busy", RecordingRuntime(names))
    reach_record(busy)
    assert busy.run.checks[0].detail.endswith("; and 3 more (see the evidence)")


def test_a_runtime_without_fences_records_nothing(tmp_path: Path) -> None:
    ctx = context(tmp_path, object())
    reach_record(ctx)
    assert ctx.run.checks == [] and not (ctx.bundle / "evidence").exists()
