"""Images built before the run by whoever started it: the host side of a runner container hands them over.

`wt certify` in a runner container (windtunnel._pipeline.in_container) never builds: the host side built
every image in the engine (it has pip and the wheelhouses), and names them in WT_PREBUILT_IMAGES, by runtime:
`{"<runtime>": {"windtunnel": "<image id>", "runtime": "<image id or ref>", "netguard": "<tag>",
"digests": {...}}}` (netguard: the egress fence's holder image). Each is checked to be in the engine
before it is used. A runtime whose own image did not build there is `{"failed": "<message>", "hint": ...,
"log_tail": [...]}`: the runner fails that runtime's build stage with it, as a local engine would, and
certifies the others.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from windtunnel.errors import ConfigFileError, HarnessError

ENV_VAR = "WT_PREBUILT_IMAGES"
IMAGE_KEYS = ("windtunnel", "runtime", "netguard")
FAILED = "failed"


def encode(images: Mapping[str, Mapping[str, Any]]) -> str:
    return json.dumps(images, sort_keys=True)


def prebuilt_for(env: Mapping[str, str], runtime: str) -> Mapping[str, Any] | None:
    """The prebuilt images of `runtime`, or None when nobody built them before the run."""
    text = env.get(ENV_VAR)
    if not text:
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object of runtimes")
        if runtime not in data:
            return None  # not ready on the host side (windtunnel._pipeline.executor_mode): tried here
        entry = data[runtime]
        if not isinstance(entry, dict):
            raise TypeError("a runtime's entry must be a JSON object")
        if FAILED in entry:
            if not isinstance(entry[FAILED], str) or not all(isinstance(x, str) for x in entry["log_tail"]):
                raise TypeError("a failed build names its message and log lines as strings")
        elif not all(isinstance(entry[key], str) for key in IMAGE_KEYS):
            raise TypeError("image ids must be strings")
        else:
            dict(entry["digests"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigFileError(
            f"{ENV_VAR} names no usable images for runtime {runtime!r} ({type(exc).__name__}: {exc})",
            hint=f"{ENV_VAR} is written by `wt certify` for its runner container; unset it to build here",
            field=ENV_VAR,
        ) from exc
    found: Mapping[str, Any] = entry
    return found


def require_present(client: Any, images: Mapping[str, Any]) -> None:
    """Every prebuilt image is in the engine (a HarnessError naming the one that is not)."""
    from docker.errors import DockerException

    for key in IMAGE_KEYS:
        try:
            client.images.get(images[key])
        except DockerException as exc:
            raise HarnessError(
                f"the prebuilt {key} image {images[key]} is not in the engine: {exc}",
                hint="the host side builds every image before it starts the runner container; rerun it",
            ) from exc


def ensure_image(client: Any, name: str, ref: str) -> None:
    """The image `ref` is in the engine: present, or pulled now; else a usage error saying how to load it."""
    from docker.errors import DockerException, ImageNotFound

    try:
        client.images.get(ref)
        return
    except ImageNotFound:
        pass
    except DockerException as exc:
        raise HarnessError(f"the Docker engine could not look up image {ref}: {exc}") from exc
    try:
        client.images.pull(ref)
    except DockerException as exc:
        reason = str(exc).splitlines()[0][:300]
        raise ConfigFileError(
            f"runtime {name!r}: image {ref} is not in the Docker engine, and pulling it failed: {reason}",
            hint=f"load it first: `docker load -i IMAGE.tar`, `docker pull {ref}` where its registry is "
            f"reachable, or `docker tag LOCAL_IMAGE {ref}`; or configure build = 'path/to/runtime-dir'",
            runtime=name,
            field="runtimes",
        ) from exc
