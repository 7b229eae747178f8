"""Abilities of a driver's plugins and runtimes that verbs ask for by isinstance(), never by a kind's name or class.

A driver kind whose plugin or runtime has an ability gets what the verbs do with it (a third-party kind built
on the container driver gets them all); one without it is not asked, and a check that needs it says so. The engine's types (the docker-py
client, windtunnel._engine's built images) live in a layer above this one, so they are typed `Any` here and
named in the docstrings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["FreshGatewayRuntime", "ImagePlugin"]


@runtime_checkable
class ImagePlugin(Protocol):
    """A plugin whose runtime runs from container images made before the run: `wt certify` checks its
    prebuilt image is in the engine before the first stage and, when a runner container certifies, builds
    its images on the host side first; `wt images build --runtime` builds its image alone; `wt doctor`
    checks the engine before building it."""

    def prebuilt_ref(self) -> str | None:
        """The image reference the runtime runs as given (`[image] ref`, an image named on its own), or None
        when its image is built from its directory. Answers without side effects."""
        ...

    def build_image(self, client: Any, *, base_image: str, cache_dir: Path | None, lock_dir: Path) -> Any:
        """Build (or reuse, by content) the runtime's own image on `base_image` in the engine of `client`
        and return it (a windtunnel._engine.images.BuiltImage); `lock_dir` is where the build takes its
        machine-wide lock (Settings.lock_dir). Only asked when prebuilt_ref() is None."""
        ...

    def prepare_images(self, client: Any, settings: Any) -> Any:
        """Every image a run of this runtime needs (windtunnel's, the runtime's, the fence's), built or
        reused in the engine of `client` with the driver settings `settings`; returns their references and
        digests (windtunnel._drivers.container_plugin.Images). A runtime image that does not build raises a
        RuntimeFault naming the runtime."""
        ...


@runtime_checkable
class FreshGatewayRuntime(Protocol):
    """A runtime that gives the tapes a fresh runtime with a model gateway of its own: the tapes stage
    replays each tape, and `wt tapes record` records each scenario, through one. Opened and closed by
    windtunnel._runner.lifecycle.fresh_runtime, inside the lifecycle of the runtime it came from."""

    def with_gateway(self, gateway: Any) -> Any:
        """A new runtime of the same images, manifest and limits on a stack of its own (network, mocks, and
        a gateway serving as `gateway`, a windtunnel._engine.stack.GatewaySpec, says: replay a tape, record
        one). It provisions on the ordinary path (never provision_reference()), has the `stack` its gateway
        is reached through, and its close() removes all of it. Starts nothing until it is used."""
        ...
