"""The container plan as data: images, services (gateway, mocks, runtime profiles), stacks, stage order.

Built by windtunnel._pipeline.container_plan; serialised by `ContainerPlan.to_json()` for executors that
are not Python (the Dagger module reads it as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "1"
READY_PATH = "/wt/health"
"""What an executor GETs to learn that a service is up. The gateway and the mocks serve it (200); for a
runtime Contract C makes it optional, so any HTTP answer there counts (see windtunnel._drivers.readiness)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectPlan:
    """A local project built as a wheel with `pip wheel --no-deps`; paths relative to the repo root."""

    path: str
    include: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelhousePlan:
    """A directory of the build context filled with wheels (plus requirements.txt listing `requirements`)."""

    directory: str
    requirements: tuple[str, ...] = ()
    projects: tuple[ProjectPlan, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePlan:
    """An image built from `dockerfile` (repo-relative) with `context` (a repo directory, or only the
    wheelhouses) and `build_args`; or, with `ref`, an image pulled as it is."""

    name: str
    tag: str
    dockerfile: str | None = None
    context: str | None = None
    build_args: Mapping[str, str] = field(default_factory=dict)
    wheelhouses: tuple[WheelhousePlan, ...] = ()
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Mount:
    """`source` is a repo-relative directory (origin "source") or a path inside the windtunnel image
    (origin "image": a pack shipped inside windtunnel, like the conformance kit's)."""

    target: str
    source: str
    origin: str = "source"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServicePlan:
    """One long-running container, run as Docker runs it: the image's entrypoint, then `args` (None: the
    image's own CMD). `alias` is its name for the runtime it serves, `runner_alias` its name for the
    process that runs the stage plan."""

    role: str
    image: str
    alias: str
    runner_alias: str
    port: int
    args: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    ready_path: str = READY_PATH
    ready_any_answer: bool = False
    """True for runtimes: any HTTP answer on ready_path means up (404 and 405 included); a 5xx other than
    501 means "not ready yet". False: ready_path must answer 200 (the gateway and the mocks serve it)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    pack: str | None = None
    server: str | None = None
    url: str | None = None
    profile: str | None = None

    @property
    def runner_url(self) -> str:
        return f"http://{self.runner_alias}:{self.port}"


@dataclass(frozen=True, slots=True, kw_only=True)
class StackPlan:
    """One runtime's stack: its gateway, the mocks its stages use, one service per runtime profile."""

    runtime: str
    gateway: ServicePlan
    mocks: tuple[ServicePlan, ...]
    runtimes: tuple[ServicePlan, ...]

    @property
    def services(self) -> tuple[ServicePlan, ...]:
        return (self.gateway, *self.mocks, *self.runtimes)

    def bound(self) -> dict[str, Any]:
        """This stack's entry of WT_BOUND_STACKS, as the runner reaches the services."""
        return {
            "gateway": self.gateway.runner_url,
            "mocks": {f"{m.pack}/{m.server}": {"url": m.url, "admin": m.runner_url} for m in self.mocks},
            "runtimes": {r.profile: r.runner_url for r in self.runtimes},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerPlan:
    base_image: str
    stages: tuple[str, ...]
    images: tuple[ImagePlan, ...]
    stacks: tuple[StackPlan, ...]

    def image(self, name: str) -> ImagePlan:
        return next(image for image in self.images if image.name == name)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (lists, not tuples): what `wt certify --print-plan` prints."""
        data: dict[str, Any] = json.loads(json.dumps({"schema": SCHEMA, **asdict(self)}))
        return data

    def bound_document(self, images: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
        """WT_BOUND_STACKS for the runner; `images` adds each stack's image digests."""
        stacks = {
            s.runtime: {**s.bound(), "images": dict((images or {}).get(s.runtime, {}))} for s in self.stacks
        }
        return {"schema": SCHEMA, "stacks": stacks}
