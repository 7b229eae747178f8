"""The result files a bundle carries: run.json, checks.json, verdict.json and tapes/index.json, versioned.

The pipeline fills them; seal and verify read them. `Verdict.from_checks` is the one rule that turns check
records into a certification result, so the verdict a bundle states can be recomputed by any verifier.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from windtunnel._bundle.canonical import is_sha256_hex
from windtunnel._bundle.keys import KeyOrigin
from windtunnel._core.tiers import Tier
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._score.pricing import CostSummary

BUNDLE_SCHEMA_VERSION = 1


class Stage(StrEnum):
    BUILD = "build"
    CONFORMANCE = "conformance"
    CANARY = "canary"
    SELFTEST = "selftest"
    TAPES = "tapes"
    PUBLISH = "publish"


class CheckScope(StrEnum):
    """`runtime`: a requirement the runtime under certification must meet. `harness`: a self-check of
    Wind Tunnel (the reference passes, a poison is caught, no container left behind)."""

    RUNTIME = "runtime"
    HARNESS = "harness"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckRecord(_Model):
    id: str = Field(pattern=r"^\S+$", description="unique in the bundle, e.g. reference/conformance/egress")
    runtime: str = Field(description="the runtime the check ran against")
    stage: Stage
    scope: CheckScope = CheckScope.RUNTIME
    scored: bool = Field(
        default=True, description="unscored checks are observations: recorded, never failing"
    )
    status: CheckStatus
    detail: str = ""
    evidence: list[str] = Field(default_factory=list, description="bundle-relative paths")
    seconds: float = 0.0
    tier: Tier | None = Field(
        default=None,
        description="the run tier of the scenario the check ran (selftest); a quarantined one is never scored",
    )
    cached: bool = Field(
        default=False,
        description="reused from an earlier run whose inputs had the same cache_key (the reference control)",
    )
    cache_key: str | None = Field(default=None, description="the digest of the inputs of a cached check")
    cached_at: str | None = Field(default=None, description="when the run a cached check came from ran")

    @model_validator(mode="after")
    def _info_is_never_scored(self) -> CheckRecord:
        if self.status is CheckStatus.INFO and self.scored:
            raise ValueError(
                f"check {self.id} is info, which never counts as passed or failed: set scored=False"
            )
        return self


class ChecksFile(_Model):
    schema_version: Literal[1] = 1
    requirement_set: str
    checks: list[CheckRecord]

    @field_validator("checks")
    @classmethod
    def _unique_ids(cls, checks: list[CheckRecord]) -> list[CheckRecord]:
        counts = Counter(check.id for check in checks)
        duplicates = sorted(check_id for check_id, count in counts.items() if count > 1)
        if duplicates:
            raise ValueError(f"check ids must be unique; repeated: {', '.join(duplicates)}")
        return checks


class RuntimeVerdict(_Model):
    name: str
    result: CertificationResult
    failed_checks: list[str] = Field(description="scored runtime checks that failed or were not measured")
    harness_errors: list[str] = Field(description="checks of this runtime that errored in Wind Tunnel")


class Verdict(_Model):
    schema_version: Literal[1] = 1
    result: CertificationResult
    requirement_set: str
    signing_key: KeyOrigin
    runtimes: list[RuntimeVerdict]
    harness_failures: list[str] = Field(description="harness self-checks that did not pass")

    @classmethod
    def from_checks(cls, checks: ChecksFile, *, signing_key: KeyOrigin) -> Verdict:
        """The certification rule; see docs/bundle.md ("The verdict rule")."""
        scored = [c for c in checks.checks if c.scored]
        harness_failures = [
            c.id for c in scored if c.scope is CheckScope.HARNESS and c.status is not CheckStatus.PASSED
        ]
        names = sorted({c.runtime for c in scored if c.scope is CheckScope.RUNTIME})
        runtimes = [_runtime_verdict(name, scored) for name in names]
        if harness_failures or any(r.result is CertificationResult.HARNESS_INVALID for r in runtimes):
            result = CertificationResult.HARNESS_INVALID
        elif runtimes and all(r.result is CertificationResult.PASSED for r in runtimes):
            result = CertificationResult.PASSED
        else:
            result = CertificationResult.FAILED
        return cls(
            result=result,
            requirement_set=checks.requirement_set,
            signing_key=signing_key,
            runtimes=runtimes,
            harness_failures=harness_failures,
        )


def _runtime_verdict(name: str, scored: list[CheckRecord]) -> RuntimeVerdict:
    own = [c for c in scored if c.runtime == name and c.scope is CheckScope.RUNTIME]
    errors = [c.id for c in own if c.status is CheckStatus.ERROR]
    failed = [c.id for c in own if c.status in (CheckStatus.FAILED, CheckStatus.NOT_MEASURED)]
    if errors:
        result = CertificationResult.HARNESS_INVALID
    elif failed:
        result = CertificationResult.FAILED
    else:
        result = CertificationResult.PASSED
    return RuntimeVerdict(name=name, result=result, failed_checks=failed, harness_errors=errors)


class HostInfo(_Model):
    """Host facts limited to OS, architecture and engine: a bundle does not say which machine made it."""

    platform: str = Field(description="OS and architecture, e.g. Linux-x86_64")
    python: str
    hostname: str | None = Field(default=None, description="no longer written; older bundles may carry it")
    engine: str | None = Field(
        default=None,
        description="container engine, version, OS and architecture, e.g. docker 20.10 (linux/amd64)",
    )
    executor: str | None = Field(
        default=None,
        description="host: the runner reached the containers from this machine; container: from a runner "
        "container inside the engine (a remote engine, Docker Desktop, docker:dind)",
    )


class RuntimeInfo(_Model):
    """A runtime under certification; its image digest is `RunInfo.images[name]` once it was built."""

    name: str
    source: str | None = Field(
        default=None,
        description="where the runtime came from: an image reference, its name, or its directory relative to "
        "the project root (never an absolute path)",
    )
    model_label: str | None = Field(
        default=None, description="the model its plugin says it answers with; null: unknown, never guessed"
    )
    cost: CostSummary | None = Field(
        default=None,
        description="the cost of its selftest runs at [tool.windtunnel.pricing] rates; cost null: unknown",
    )
    stage_seconds: dict[str, float] = Field(
        default_factory=dict, description="wall time of each stage that ran for it, by stage name"
    )


class RunInfo(_Model):
    schema_version: Literal[1] = 1
    run_id: str
    tool_version: str
    suite_version: str = Field(description="version of the conformance suite and bundled packs")
    requirement_set: str
    git_commit: str | None = None
    host: HostInfo
    started_at: AwareDatetime
    ended_at: AwareDatetime
    runtimes: list[RuntimeInfo]
    images: dict[str, str] = Field(
        default_factory=dict,
        description="every image the run used, keyed by runtime name (or gateway, mock names): "
        "name -> sha256:<hex>; each becomes the statement subject image:<name>",
    )
    swept: list[str] = Field(
        default_factory=list,
        description="containers and networks of earlier runs whose owner had died, removed at the start",
    )
    tiers: list[str] = Field(
        default_factory=lambda: ["smoke", "stable"],
        description="the run tiers whose scenarios ran; smoke and stable gate, quarantined never does",
    )

    @field_validator("images")
    @classmethod
    def _images(cls, images: dict[str, str]) -> dict[str, str]:
        for name, digest in images.items():
            if not (digest.startswith("sha256:") and is_sha256_hex(digest.removeprefix("sha256:"))):
                raise ValueError(f"images[{name!r}] must be sha256:<64 lowercase hex>, found {digest!r}")
        return images

    @model_validator(mode="after")
    def _ordered(self) -> RunInfo:
        if self.ended_at < self.started_at:
            raise ValueError(f"ended_at {self.ended_at} is before started_at {self.started_at}")
        return self


class TapeEntry(_Model):
    name: str
    path: str | None = Field(default=None, description="where the tape lives in its pack")
    sha256: str | None = None
    interactions: int = 0
    recorded_at: AwareDatetime = Field(description="when the oldest interaction of the tape was recorded")
    scripted: bool = Field(
        default=False,
        description="recorded from the scripted upstream, checked against its scenario: exempt from the age limit",
    )


class TapeIndex(_Model):
    schema_version: Literal[1] = 1
    tapes: list[TapeEntry]
