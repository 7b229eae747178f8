"""The base image every Wind Tunnel image builds FROM: local, pulled, or bootstrapped from Debian packages."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import docker
from docker.errors import DockerException, ImageNotFound

from windtunnel import __version__
from windtunnel._config import default_lock_dir
from windtunnel._locks import machine_lock
from windtunnel.errors import HarnessError

log = logging.getLogger(__name__)

DEFAULT_BASE_IMAGE = "python:3.12-slim"
DEFAULT_SUITE = "bookworm"
BOOTSTRAP_REPOSITORY = "windtunnel/base"
BOOTSTRAP_PACKAGES: tuple[str, ...] = ("python3", "python3-venv", "ca-certificates")
DEFAULT_PULL_TIMEOUT_S = 30.0
BOOTSTRAP_TIMEOUT_S = 1800.0

ORIGIN_LABEL = "windtunnel.base.origin"
"""How a base image was made: `debootstrap` for ours; absent on pulled images."""


class BaseImageError(HarnessError):
    """No base image could be found, pulled or bootstrapped: a fault of the machine (every verb exits 2)."""

    environment = True


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetPython:
    """The Python inside an image, as far as choosing wheels goes."""

    version: str
    glibc: str
    machine: str = "x86_64"

    def platform_tags(self) -> list[str]:
        """manylinux tags the image can run, newest first (manylinux_2_5 up to the image's glibc)."""
        major, _, minor = self.glibc.partition(".")
        if major != "2" or not minor.isdigit():
            raise BaseImageError(
                f"the image's C library is glibc {self.glibc!r}; expected a glibc 2.x",
                hint="use a glibc-based base image (Debian, Ubuntu); musl images are not supported",
            )
        tags = [f"manylinux_2_{n}_{self.machine}" for n in range(int(minor), 4, -1)]
        return [*tags, f"manylinux2014_{self.machine}", f"manylinux2010_{self.machine}"]


PROBE_SCRIPT = (
    "import json, platform, sys; "
    "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], "
    "'glibc': platform.libc_ver()[1], 'machine': platform.machine()}))"
)
PROBES_FILE = "python-probes.json"


def default_probe_cache_dir() -> Path:
    return Path.home() / ".cache" / "windtunnel" / "wheelhouse"


def probe_python(client: docker.DockerClient, image: str, *, cache_dir: Path | None = None) -> TargetPython:
    """The Python in `image`, found by running it once; remembered per image id in `cache_dir`."""
    cache = cache_dir or default_probe_cache_dir()
    try:
        image_id = str(client.images.get(image).id)
    except DockerException as exc:
        raise BaseImageError(
            f"cannot inspect image {image}: {exc}", hint="build or pull it first (see `wt images --help`)"
        ) from exc
    known = _read_probes(cache)
    if image_id in known:
        return TargetPython(**known[image_id])
    target = parse_probe(_run_probe(client, image))
    known[image_id] = asdict(target)
    cache.mkdir(parents=True, exist_ok=True)
    staging = cache / f".{PROBES_FILE}.{time.monotonic_ns()}"
    staging.write_text(json.dumps(known, indent=2, sort_keys=True), encoding="utf-8")
    staging.replace(cache / PROBES_FILE)
    return target


def _read_probes(cache: Path) -> dict[str, dict[str, str]]:
    try:
        loaded = json.loads((cache / PROBES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _run_probe(client: docker.DockerClient, image: str) -> str:
    try:
        output = client.containers.run(
            image, ["python3", "-c", PROBE_SCRIPT], remove=True, network_mode="none", stderr=True
        )
    except DockerException as exc:
        raise BaseImageError(
            f"running python3 in {image} failed: {exc}",
            hint="the base image needs python3 on PATH (and python3-venv); `wt images bootstrap` makes one",
        ) from exc
    return bytes(output).decode("utf-8", "replace")


def parse_probe(output: str) -> TargetPython:
    """TargetPython from the probe's one JSON line; the error quotes what came back instead."""
    try:
        fields = json.loads(output.strip().splitlines()[-1])
        return TargetPython(version=fields["version"], glibc=fields["glibc"], machine=fields["machine"])
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise BaseImageError(
            f"the Python probe printed {output.strip()[:200]!r}; expected one JSON line with version, glibc, machine",
            hint="check that python3 in the base image runs and is CPython 3",
        ) from exc


def bootstrap_tag(suite: str = DEFAULT_SUITE) -> str:
    """The tag a bootstrapped base image gets, e.g. windtunnel/base:bookworm-py3."""
    return f"{BOOTSTRAP_REPOSITORY}:{suite}-py3"


def ensure_base_image(
    client: docker.DockerClient,
    base_image: str = DEFAULT_BASE_IMAGE,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str | None = None,
    pull_timeout: float = DEFAULT_PULL_TIMEOUT_S,
    cache_dir: Path | None = None,
    lock_dir: Path | None = None,
) -> str:
    """An image reference usable as the BASE_IMAGE build arg.

    Order: `base_image` if present locally; `base_image` pulled within `pull_timeout`; a previously
    bootstrapped image, in the engine or loaded from its tar (windtunnel._engine.base_transfer: saved
    under `cache_dir`, or saved now from the local engine); a fresh bootstrap (cached under
    bootstrap_tag(suite) and saved as a tar for next time). For the default base image the bootstrapped
    one is tried before the pull, so warm runs on a machine with no registry never wait on one; an
    explicitly chosen image always gets its pull attempt first. `lock_dir` holds the machine-wide lock
    (the caller's Settings.lock_dir; None: the default directory).
    """
    if image_present(client, base_image):
        return base_image
    # One bootstrap per machine: a concurrent caller (whatever base image it asked for) waits, then finds
    # the image the first one made.
    with machine_lock(f"base-image {bootstrap_tag(suite)}", lock_dir or default_lock_dir()):
        return _find_or_make(client, base_image, suite, mirror, pull_timeout, cache_dir)


def _find_or_make(
    client: docker.DockerClient,
    base_image: str,
    suite: str,
    mirror: str | None,
    pull_timeout: float,
    cache_dir: Path | None,
) -> str:
    from windtunnel._engine.base_transfer import save, saved_tar, transfer

    if image_present(client, base_image):
        return base_image
    cached = bootstrap_tag(suite)
    prefer_cached = base_image == DEFAULT_BASE_IMAGE
    if prefer_cached and (image_present(client, cached) or transfer(client, cached, cache_dir)):
        log.info("using the bootstrapped base image %s in place of %s", cached, base_image)
        return cached
    if try_pull(client, base_image, timeout=pull_timeout):
        return base_image
    if image_present(client, cached) or transfer(client, cached, cache_dir):
        log.warning("%s cannot be pulled; using the bootstrapped %s instead", base_image, cached)
        return cached
    log.warning("%s cannot be pulled; bootstrapping %s from Debian packages", base_image, cached)
    tag = bootstrap_base_image(client, tag=cached, suite=suite, mirror=mirror)
    save(client, tag, saved_tar(tag, cache_dir))  # never bootstrapped twice, in any engine
    return tag


def image_present(client: docker.DockerClient, reference: str) -> bool:
    try:
        client.images.get(reference)
    except ImageNotFound:
        return False
    return True


def try_pull(client: docker.DockerClient, reference: str, *, timeout: float) -> bool:
    """Pull in a worker thread: docker-py pulls without a timeout, and an unreachable registry may hang."""
    outcome: list[bool] = []

    def pull() -> None:
        try:
            client.images.pull(reference)
            outcome.append(True)
        except DockerException as exc:
            log.info("pulling %s failed: %s", reference, exc)
            outcome.append(False)

    worker = threading.Thread(target=pull, name=f"wt-pull-{reference}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        log.info("pulling %s took longer than %.0f s; giving up", reference, timeout)
        return False
    return bool(outcome and outcome[0])


def bootstrap_base_image(
    client: docker.DockerClient,
    *,
    tag: str | None = None,
    suite: str = DEFAULT_SUITE,
    mirror: str | None = None,
    packages: Sequence[str] = BOOTSTRAP_PACKAGES,
    workdir: Path | None = None,
) -> str:
    """debootstrap a minimal Debian with Python into a temp dir and `docker import` it as `tag`.

    Needs root and debootstrap on PATH; raises BaseImageError saying which is missing.
    """
    tag = tag or bootstrap_tag(suite)
    debootstrap = require_bootstrap_tools()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wt-bootstrap-", dir=workdir) as tmp:
        rootfs = Path(tmp) / "rootfs"
        try:
            _debootstrap(debootstrap, rootfs, suite=suite, mirror=mirror, packages=packages)
            _trim(rootfs)
            archive = _archive(rootfs, Path(tmp) / "rootfs.tar")
            _import(client, archive, tag=tag, changes=_changes(suite, mirror, packages))
        finally:
            _unmount_under(rootfs)
    log.info("bootstrapped %s in %.0f s", tag, time.monotonic() - started)
    return tag


def require_bootstrap_tools() -> str:
    if os.geteuid() != 0:
        raise BaseImageError(
            f"bootstrapping a base image needs root (running as uid {os.geteuid()})",
            hint="run `sudo wt images bootstrap`, or make BASE_IMAGE pullable / present locally",
        )
    found = shutil.which("debootstrap")
    if found is None:
        raise BaseImageError(
            "bootstrapping a base image needs debootstrap, and it is not on PATH",
            hint="install it (`apt-get install debootstrap`), or make BASE_IMAGE pullable / present locally",
        )
    return found


def _debootstrap(
    debootstrap: str, rootfs: Path, *, suite: str, mirror: str | None, packages: Sequence[str]
) -> None:
    command = [debootstrap, "--variant=minbase", f"--include={','.join(packages)}", suite, str(rootfs)]
    if mirror:
        command.append(mirror)
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=BOOTSTRAP_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        lines = [line.strip() for line in (exc.stdout + exc.stderr).splitlines() if line.strip()]
        log.warning("debootstrap output:\n%s", "\n".join(lines[-15:]))
        raise BaseImageError(
            f"debootstrap of {suite} failed with exit {exc.returncode}: {lines[-1] if lines else 'no output'}",
            hint="check that the Debian mirror is reachable (pass --mirror URL for another one) "
            "and that the suite name is right",
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise BaseImageError(
            f"debootstrap of {suite} did not finish within {BOOTSTRAP_TIMEOUT_S:.0f} s",
            hint="check the connection to the Debian mirror, or pass a closer one with --mirror URL",
        ) from exc


def _trim(rootfs: Path) -> None:
    # Package caches and the host's resolver/hostname files have no business in an image.
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (rootfs / cache).glob("*"):
            if entry.is_file():
                entry.unlink()
    for copied in ("etc/resolv.conf", "etc/hostname"):
        target = rootfs / copied
        if target.is_file() and not target.is_symlink():
            target.write_text("", encoding="utf-8")


def _archive(rootfs: Path, archive: Path) -> Path:
    subprocess.run(
        ["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-cf", str(archive), "."],
        check=True,
        capture_output=True,
    )
    return archive


def _changes(suite: str, mirror: str | None, packages: Sequence[str]) -> list[str]:
    labels = {
        ORIGIN_LABEL: "debootstrap",
        "windtunnel.base.suite": suite,
        "windtunnel.base.variant": "minbase",
        "windtunnel.base.packages": ",".join(packages),
        "windtunnel.base.mirror": mirror or "debootstrap default",
        "windtunnel.base.created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "windtunnel.version": __version__,
    }
    return [
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        'CMD ["python3"]',
        "LABEL " + " ".join(f"{key}={json.dumps(value)}" for key, value in labels.items()),
    ]


def _import(client: docker.DockerClient, archive: Path, *, tag: str, changes: list[str]) -> None:
    repository, _, version = tag.rpartition(":")
    if not repository or "/" in version:
        repository, version = tag, "latest"
    try:
        client.api.import_image(src=str(archive), repository=repository, tag=version, changes=changes)
    except DockerException as exc:
        raise BaseImageError(
            f"docker import of the bootstrapped root filesystem as {tag} failed: {exc}",
            hint="check the engine's log; the disk may be full",
        ) from exc
    if not image_present(client, tag):
        raise BaseImageError(
            f"docker import reported success but {tag} is not in the engine's image list",
            hint="check the engine's log; re-run `wt images bootstrap`",
        )


def _unmount_under(root: Path) -> None:
    # A debootstrap that died mid-way can leave /proc or /sys mounted inside the target; the temp dir's
    # cleanup must never descend into them.
    prefix = str(root.resolve())
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    points = [line.split()[1] for line in mounts if len(line.split()) > 1]
    for point in sorted((p for p in points if p == prefix or p.startswith(prefix + "/")), reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)
