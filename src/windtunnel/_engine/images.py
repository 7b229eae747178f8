"""Offline image builds: a temp context of app files + a wheelhouse, skipped when the content is unchanged.

Every image carries a `windtunnel.content-hash` label over what went into it (Dockerfile, context files,
wheels, base image id, build args, labels). A build whose hash is already in the engine is not run again,
so warm runs cost one hash and one image lookup.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException, ImageNotFound
from docker.models.images import Image

from windtunnel import __version__
from windtunnel._config import WINDTUNNEL_DOCKERFILE, bundled_root, default_lock_dir
from windtunnel._engine.base_image import probe_python
from windtunnel._engine.npm_packs import CONTEXT_DIR as NPM_CONTEXT_DIR
from windtunnel._engine.npm_packs import fetch_npm_packs
from windtunnel._engine.wheelhouse import (
    REQUIREMENTS_FILE,
    LocalProject,
    build_wheelhouse,
    normalize_requirements,
    project_dependencies,
    read_requirements,
    tree_files,
)
from windtunnel._locks import machine_lock
from windtunnel.errors import HarnessError

log = logging.getLogger(__name__)

BUILD_SCHEMA = "1"
"""Bump when staging or build options change, so images built the old way stop matching."""

CONTENT_HASH_LABEL = "windtunnel.content-hash"
IMAGE_KIND_LABEL = "windtunnel.image"
WHEELHOUSE_LABEL = "windtunnel.wheelhouse"
PRUNE_AFTER = "1h"
WINDTUNNEL_TAG = f"windtunnel/windtunnel:{__version__}"
WINDTUNNEL_SOURCES: tuple[str, ...] = ("pyproject.toml", "README.md", "LICENSE", "src")
"""The files of the repo that go into the windtunnel wheel, and so into its image's hash."""
PACKAGE_WHEELS = "package-wheels"
"""The build-context directory with the wheels of a runtime's local packages (runtime.toml [image] packages);
their dependencies go into wheels/ with the runtime's requirements."""


class ImageBuildError(HarnessError):
    """An image could not be built; the message carries the last lines of the build log (`.log_tail`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltImage:
    """A built image. `id` is the engine's image id (sha256 of its config); `digest` is the registry
    digest when the image has one, else the id: the content address a bundle records."""

    tag: str
    id: str
    digest: str
    content_hash: str
    reused: bool


def build_image(
    client: docker.DockerClient,
    *,
    context_dir: Path | None,
    dockerfile: Path,
    tag: str,
    base_image: str,
    wheelhouse_dir: Path | None,
    labels: Mapping[str, str] | None = None,
    build_args: Mapping[str, str] | None = None,
    extra_wheels: Mapping[str, Path] | None = None,
    lock_dir: Path | None = None,
) -> BuiltImage:
    """Build `dockerfile` with `context_dir`'s files plus `wheels/` (the wheelhouse) as its context.

    `extra_wheels` adds more wheelhouses under other context directories (name -> wheelhouse dir).
    Runs with network "none" and BASE_IMAGE as a build arg; returns the existing image instead when one
    with the same content hash is present. Raises ImageBuildError with the build's last log lines.
    `lock_dir` holds the machine-wide build lock (the caller's Settings.lock_dir; None: the default).
    """
    args = {**(build_args or {}), "BASE_IMAGE": base_image}
    labels = dict(labels or {})
    wheel_dirs = {**({"wheels": wheelhouse_dir} if wheelhouse_dir else {}), **(extra_wheels or {})}
    content_hash = context_hash(
        context_dir=context_dir,
        dockerfile=dockerfile,
        wheel_dirs=wheel_dirs,
        base_image_id=_image_id(client, base_image),
        build_args=args,
        labels=labels,
    )
    # One build per content hash on this machine: a concurrent caller (another session, an xdist worker)
    # waits here and then reuses the image instead of building a twin under the same tag.
    with machine_lock(f"image-build {content_hash}", lock_dir or default_lock_dir()):
        existing = find_by_content_hash(client, content_hash)
        if existing is not None:
            _ensure_tag(existing, tag)
            return _built(existing, tag, content_hash, reused=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="wt-build-") as tmp:
            stage_context(Path(tmp), context_dir=context_dir, dockerfile=dockerfile, wheel_dirs=wheel_dirs)
            image_id = _run_build(client, Path(tmp), tag, args, {**labels, CONTENT_HASH_LABEL: content_hash})
    log.info("built %s in %.1f s", tag, time.monotonic() - started)
    _prune_superseded(client, labels.get(IMAGE_KIND_LABEL))
    return _built(client.images.get(image_id), tag, content_hash, reused=False)


def context_hash(
    *,
    context_dir: Path | None,
    dockerfile: Path,
    wheel_dirs: Mapping[str, Path],
    base_image_id: str,
    build_args: Mapping[str, str],
    labels: Mapping[str, str],
) -> str:
    """sha256 over everything a build consumes; the tag is not part of it (same content, same image)."""
    digest = hashlib.sha256()
    header = {"schema": BUILD_SCHEMA, "base": base_image_id, "args": build_args, "labels": labels}
    digest.update(json.dumps(header, sort_keys=True).encode())
    for name, path in _context_entries(context_dir, dockerfile, wheel_dirs):
        digest.update(b"\0" + name.encode() + b"\0")
        digest.update(_file_sha256(path))
    return digest.hexdigest()


def stage_context(
    destination: Path, *, context_dir: Path | None, dockerfile: Path, wheel_dirs: Mapping[str, Path]
) -> None:
    """Lay out the build context: context files, `Dockerfile`, and each wheelhouse under its name."""
    # wheels/ and npm/ always exist, so a shared Dockerfile can COPY them whether or not a runtime has any.
    for name in ("wheels", NPM_CONTEXT_DIR, *wheel_dirs):
        (destination / name).mkdir(parents=True, exist_ok=True)
    for name, source in _context_entries(context_dir, dockerfile, wheel_dirs):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(source, target)


def _context_entries(
    context_dir: Path | None, dockerfile: Path, wheel_dirs: Mapping[str, Path]
) -> Iterator[tuple[str, Path]]:
    """(name in the context, source file) pairs in a fixed order; wheelhouses replace same-named dirs."""
    if context_dir is not None:
        for relative in tree_files(context_dir):
            if relative.as_posix() != "Dockerfile" and relative.parts[0] not in wheel_dirs:
                yield relative.as_posix(), context_dir / relative
    if not dockerfile.is_file():
        raise ImageBuildError(
            f"the Dockerfile {dockerfile} does not exist", hint="check the runtime or repo directory"
        )
    yield "Dockerfile", dockerfile
    for directory, wheelhouse in sorted(wheel_dirs.items()):
        # Wheels of a wheelhouse, or the tarballs of npm packs (npm_packs.py).
        for package in sorted([*wheelhouse.glob("*.whl"), *wheelhouse.glob("*.tgz")]):
            yield f"{directory}/{package.name}", package
        if (wheelhouse / REQUIREMENTS_FILE).is_file():
            yield f"{directory}/{REQUIREMENTS_FILE}", wheelhouse / REQUIREMENTS_FILE


def _file_sha256(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def _link_or_copy(source: Path, target: Path) -> None:
    # Wheels are large and immutable once cached: a hard link costs nothing; other filesystems copy.
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def find_by_content_hash(client: docker.DockerClient, content_hash: str) -> Image | None:
    """The image built from this content; of twins (built on another machine sharing the engine), always
    the oldest, so every caller settles on the same one."""
    found = client.images.list(filters={"label": f"{CONTENT_HASH_LABEL}={content_hash}"})
    return min(found, key=lambda image: (_created(image), str(image.id)), default=None)


def _created(image: Image) -> str:
    """The image's creation time (RFC 3339, UTC, fraction trimmed) as a string that sorts in time order."""
    stamp = str(image.attrs.get("Created", "")).removesuffix("Z")
    whole, _, fraction = stamp.partition(".")
    return f"{whole}.{fraction.ljust(9, '0')}"


def _prune_superseded(client: docker.DockerClient, kind: str | None) -> None:
    """Drop earlier builds of the same kind, left untagged when their tag moved to the new image.

    Only those older than PRUNE_AFTER: a concurrent session may hold a newer one by id, about to start a
    container from it. Images in use by a container are never removed. Untagged intermediate stages
    (labelled windtunnel.build-stage) stay: they are the layer cache that lets a source edit rebuild
    only the last steps.
    """
    if kind is None:
        return
    selector = {"dangling": True, "label": f"{IMAGE_KIND_LABEL}={kind}", "until": PRUNE_AFTER}
    try:
        client.images.prune(filters=selector)
    except DockerException as exc:  # disk hygiene only: a failed prune must not fail the build
        log.info("pruning untagged %s images failed: %s", kind, exc)


def _image_id(client: docker.DockerClient, reference: str) -> str:
    try:
        return str(client.images.get(reference).id)
    except ImageNotFound as exc:
        raise ImageBuildError(
            f"the base image {reference} is not in the engine",
            hint="call ensure_base_image() first, or run `wt images bootstrap`",
            image=reference,
        ) from exc


def _ensure_tag(image: Image, tag: str) -> None:
    if tag in image.tags:
        return
    repository, _, version = tag.rpartition(":")
    if not repository or "/" in version:
        repository, version = tag, "latest"
    image.tag(repository, version)


def _built(image: Image, tag: str, content_hash: str, *, reused: bool) -> BuiltImage:
    repo_digests: list[str] = image.attrs.get("RepoDigests") or []
    digest = repo_digests[0].rpartition("@")[2] if repo_digests else str(image.id)
    return BuiltImage(tag=tag, id=str(image.id), digest=digest, content_hash=content_hash, reused=reused)


def _run_build(
    client: docker.DockerClient, context: Path, tag: str, args: Mapping[str, str], labels: Mapping[str, str]
) -> str:
    """Stream a legacy-builder build with no network; return the image id or raise with the log tail."""
    log_lines: list[str] = []
    image_id: str | None = None
    errors: list[str] = []
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile="Dockerfile",
            tag=tag,
            buildargs=dict(args),
            labels=dict(labels),
            network_mode="none",
            pull=False,
            rm=True,
            forcerm=True,
            decode=True,
            use_config_proxy=False,
        )
        # Read to the end even after an error: an abandoned stream leaks its connection.
        for chunk in stream:
            image_id = _consume(chunk, tag, log_lines, errors) or image_id
    except DockerException as exc:
        raise _build_error(tag, f"the engine refused the build: {exc}", log_lines) from exc
    if errors:
        raise _build_error(tag, errors[0], log_lines)
    if image_id is None:
        raise _build_error(tag, "the engine reported no image id", log_lines)
    return image_id


def _consume(chunk: dict[str, Any], tag: str, log_lines: list[str], errors: list[str]) -> str | None:
    if "stream" in chunk:
        lines = [line for line in str(chunk["stream"]).splitlines() if line.strip()]
        for line in lines:
            log.debug("build %s: %s", tag, line)
        log_lines.extend(lines)
    if "error" in chunk:
        errors.append(str(chunk["error"]).strip())
    aux = chunk.get("aux")
    if isinstance(aux, dict) and "ID" in aux:
        return str(aux["ID"])
    return None


def _build_error(tag: str, reason: str, log_lines: list[str]) -> ImageBuildError:
    tail = log_lines[-25:]
    return ImageBuildError(
        f"building {tag} failed: {reason}\n--- last build output ---\n" + "\n".join(tail),
        hint="builds run with no network: every package must come from the wheelhouse (wheels/) and the "
        "base image; fix the step shown above",
        log_tail=tail,
    )


def windtunnel_source_root() -> Path:
    """The source checkout this windtunnel runs from: the image is built from source, not from PyPI."""
    root = bundled_root()
    if root is None:
        import windtunnel

        raise ImageBuildError(
            f"windtunnel runs from {Path(windtunnel.__file__).resolve().parent}, not from a source checkout "
            f"with {WINDTUNNEL_DOCKERFILE}",
            hint="install windtunnel from a clone (`pip install -e .`) to build its image",
        )
    return root


def build_windtunnel_image(
    client: docker.DockerClient,
    *,
    repo_root: Path,
    base_image: str,
    tag: str = WINDTUNNEL_TAG,
    cache_dir: Path | None = None,
    lock_dir: Path | None = None,
) -> BuiltImage:
    """The gateway/mocks image: windtunnel built from `repo_root` (`pip wheel --no-deps`) plus its deps."""
    dockerfile = repo_root / WINDTUNNEL_DOCKERFILE
    target = probe_python(client, base_image, cache_dir=cache_dir)
    # Two wheelhouses: the dependencies change rarely, the windtunnel wheel with every source edit. The
    # Dockerfile installs them in separate layers so an edit rebuilds only the last, small one.
    dependencies = build_wheelhouse(project_dependencies(repo_root), target=target, cache_dir=cache_dir)
    project = LocalProject(path=repo_root, include=WINDTUNNEL_SOURCES)
    app = build_wheelhouse((), target=target, projects=[project], cache_dir=cache_dir)
    return build_image(
        client,
        context_dir=None,
        dockerfile=dockerfile,
        tag=tag,
        base_image=base_image,
        wheelhouse_dir=dependencies.path,
        extra_wheels={"app-wheels": app.path},
        labels={
            IMAGE_KIND_LABEL: "windtunnel",
            "windtunnel.version": __version__,
            WHEELHOUSE_LABEL: f"{dependencies.key} {app.key}",
        },
        lock_dir=lock_dir,
    )


def runtime_image_tag(runtime: str) -> str:
    """`windtunnel/runtime-<name>:latest` for a runtime name, made a valid Docker repository name.

    Docker wants lower case and `[a-z0-9]` runs joined by `.`, `_`, `__` or dashes. A name that needs
    changing gets a digest of the original, so two names differing only by case (or by characters
    replaced here) never share an image tag.
    """
    safe = _REPOSITORY_UNSAFE.sub("-", runtime.lower())
    safe = _SEPARATOR_RUN.sub(_one_separator, safe).strip("._-")[:_MAX_COMPONENT] or "runtime"
    if safe != runtime:
        safe = f"{safe.rstrip('._-')}-{hashlib.sha256(runtime.encode()).hexdigest()[:8]}"
    return f"windtunnel/runtime-{safe}:latest"


_REPOSITORY_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_SEPARATOR_RUN = re.compile(r"[._-]{2,}")
_MAX_COMPONENT = 100


def _one_separator(match: re.Match[str]) -> str:
    run = match.group()
    return run if run == "__" or set(run) == {"-"} else "-"


def requirements_file(build_dir: Path, requirements: Path | None) -> Path | None:
    """The requirements a runtime's wheelhouse is built from: the manifest's, else the build directory's
    requirements.txt when there is one, else none."""
    if requirements is not None:
        return requirements
    default = build_dir / REQUIREMENTS_FILE
    return default if default.is_file() else None


def runtime_requirements(
    build_dir: Path, requirements: Path | None, packages: Sequence[Path] = ()
) -> tuple[str, ...]:
    """What a runtime's wheels/ is made from: its requirements file plus each local package's dependencies.

    A local package itself is never a requirement: its wheel is built from its directory (PACKAGE_WHEELS),
    so no index is ever asked for a package of that name.
    """
    source = requirements_file(build_dir, requirements)
    wanted = read_requirements(source) if source is not None else ()
    return normalize_requirements([*wanted, *(dep for pkg in packages for dep in project_dependencies(pkg))])


def build_runtime_image(
    client: docker.DockerClient,
    runtime_dir: Path,
    *,
    base_image: str,
    tag: str | None = None,
    cache_dir: Path | None = None,
    labels: Mapping[str, str] | None = None,
    dockerfile: str = "Dockerfile",
    requirements: Path | None = None,
    packages: Sequence[Path] = (),
    build_args: Mapping[str, str] | None = None,
    name: str | None = None,
    npm: Sequence[str] = (),
    lock_dir: Path | None = None,
) -> BuiltImage:
    """A runtime under certification: `runtime_dir/<dockerfile>` with the directory as context, a
    wheelhouse of runtime_requirements() as `wheels/`, with `packages` their wheels as `package-wheels/`
    and, with `npm` (exact pins), their tarballs packed on the host as `npm/`.

    The tag comes from `name` (the runtime's name; default: the directory's), see runtime_image_tag().
    """
    directory = runtime_dir.resolve().name
    target = probe_python(client, base_image, cache_dir=cache_dir)
    wanted = runtime_requirements(runtime_dir, requirements, packages)
    wheelhouse = build_wheelhouse(wanted, target=target, cache_dir=cache_dir)
    extra, keys = {}, [wheelhouse.key]
    if packages:
        projects = [LocalProject(path=package) for package in packages]
        local = build_wheelhouse((), target=target, projects=projects, cache_dir=cache_dir)
        extra, keys = {PACKAGE_WHEELS: local.path}, [*keys, local.key]
    if npm:
        packs = fetch_npm_packs(npm, cache_dir=cache_dir / NPM_CONTEXT_DIR if cache_dir else None)
        extra, keys = {**extra, NPM_CONTEXT_DIR: packs.path}, [*keys, packs.key]
    return build_image(
        client,
        context_dir=runtime_dir,
        dockerfile=runtime_dir / dockerfile,
        tag=tag or runtime_image_tag(name or directory),
        base_image=base_image,
        wheelhouse_dir=wheelhouse.path,
        extra_wheels=extra,
        build_args=build_args,
        labels={
            # By directory, not runtime name: variants built from one directory share one image.
            IMAGE_KIND_LABEL: f"runtime:{directory}",
            "windtunnel.version": __version__,
            WHEELHOUSE_LABEL: " ".join(keys),
            **(labels or {}),
        },
        lock_dir=lock_dir,
    )
