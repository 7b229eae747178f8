"""`wt certify` from a runner container inside the engine, when this process cannot reach container addresses.

The host side builds every image in the engine (it has pip and the wheelhouses; the engine may have no
network), then starts a runner container from the windtunnel image: the project's files copied in, the
engine's own unix socket bind-mounted from the ENGINE's filesystem (which exists on a local, remote,
Desktop or docker:dind engine alike), the images named in WT_PREBUILT_IMAGES. The runner runs the same
`wt certify --executor host`, joining each run network as it creates it (windtunnel._engine.runner_peer),
so every check is measured as on a local engine. Its output streams here; Ctrl-C and SIGTERM are forwarded
(the runner cleans up and exits); the bundle is copied out into --out; its exit code is returned.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys
import tarfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import Any

from docker.errors import DockerException

from windtunnel._engine.files import copy_out, put, secret_files
from windtunnel._engine.network import ROLE_LABEL, SESSION_LABEL, run_labels
from windtunnel._engine.prebuilt import ENV_VAR as PREBUILT_ENV
from windtunnel._engine.prebuilt import encode
from windtunnel._engine.runner_peer import RUNNER_ENV
from windtunnel._pipeline.config import CertifyConfig
from windtunnel.errors import HarnessError

WORKDIR = "/work"
"""The windtunnel image's WORKDIR: the project's files go there."""
SOURCE = "/wt/source"
"""Wind Tunnel's own checkout, when the project is another directory: its runtime.toml files may name the
checkout's shared Dockerfile and libraries (`windtunnel:...`), which the installed wheel does not carry."""
BUNDLE = "/wt/bundle"
KEY_PATH = "/run/secrets/wt-signing-key"
ENGINE_SOCKET = "/var/run/docker.sock"
"""The engine's socket on the engine's own filesystem; WT_ENGINE_SOCKET names another (a rootless engine)."""
KEPT_ENV = ("WT_GATEWAY_MODE", "WT_UPSTREAM_URL", "WT_INJECT_TIMEOUT_S", "WT_BASE_IMAGE", "BASE_IMAGE")
"""Settings the runner needs as they are here; secrets (keys) go in as files, host paths not at all."""
SKIPPED = {
    "__pycache__",
    "node_modules",
    ".git",
    ".venv",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".import_linter_cache",
    ".wt-cache",
    ".coverage-data",
    ".coverage",
}
"""Never part of what the runner needs, at any depth (as .gitignore has it)."""
SKIPPED_TOP = {"runs", "out", "build", "dist", "wheelhouse"}
"""Run output and build output at the top of the directory."""
STOP_TIMEOUT_S = 120.0


def certify_in_container(
    client: Any,
    config: CertifyConfig,
    *,
    runtimes: Sequence[str],
    flags: Sequence[str],
    images: Mapping[str, Mapping[str, Any]],
    progress: Callable[[str], None],
) -> int:
    """Run `wt certify` in a runner container and copy its bundle into config.out_dir; its exit code."""
    session = f"runner-{uuid.uuid4().hex[:10]}"
    runner = _create(client, config, runtimes, flags, images, session)
    progress(f"certifying from runner container {runner.name} inside the engine")
    try:
        runner.start()
        code = _follow(client, runner)
        copied = _collect(runner, config.out_dir)
        progress(f"copied the bundle out of the runner: {copied} files into {config.out_dir}")
        if str(config.out_dir) != BUNDLE:
            # The runner's own lines (signed:, verify:) name its container paths, not this machine's.
            progress(
                f"the runner's {BUNDLE} above is {config.out_dir} here (and {BUNDLE}.tar.gz its archive)"
            )
        return code
    finally:
        _remove(client, runner, session, progress)


def _create(
    client: Any,
    config: CertifyConfig,
    runtimes: Sequence[str],
    flags: Sequence[str],
    images: Mapping[str, Mapping[str, Any]],
    session: str,
) -> Any:
    name = f"wt-{session}"
    command = ["certify", "--executor", "host", "--out", BUNDLE, *flags]
    command += [arg for runtime in runtimes for arg in ("--runtime", _inside(runtime, config.root))]
    key = _key(config)
    if key is not None:
        command += ["--key", KEY_PATH]
    env = {k: config.env[k] for k in KEPT_ENV if config.env.get(k)}
    env |= {RUNNER_ENV: name, PREBUILT_ENV: encode(images), "WT_SESSION_LABEL": session}
    checkout = _checkout(config.root)
    env["PYTHONPATH"] = f"{WORKDIR if checkout is None else SOURCE}/src"  # windtunnel from its checkout
    socket = config.env.get("WT_ENGINE_SOCKET", ENGINE_SOCKET)
    labels = {**run_labels(session, session=session), ROLE_LABEL: "runner"}
    try:
        runner = client.containers.create(
            images["reference"]["windtunnel"],
            command=command,
            name=name,
            environment=env,
            labels=labels,
            working_dir=WORKDIR,
            volumes={socket: {"bind": "/var/run/docker.sock", "mode": "rw"}},
        )
        put(runner, project_archive(config.root, skip=config.out_dir), "the project's files")
        if checkout is not None:
            put(runner, project_archive(checkout, target=SOURCE), "Wind Tunnel's checkout")
        if key is not None:
            put(runner, secret_files({KEY_PATH: key}), "the signing key")
    except DockerException as exc:
        raise HarnessError(
            f"could not create the runner container: {exc}",
            hint="check the engine (`docker info`); the windtunnel image was built just before",
        ) from exc
    return runner


def _checkout(root: Path) -> Path | None:
    """Wind Tunnel's checkout when it is not the project itself (None when it is)."""
    from windtunnel._engine.images import windtunnel_source_root

    source = windtunnel_source_root().resolve()
    return None if source == root.resolve() else source


def _inside(runtime: str, root: Path) -> str:
    """A runtime named by a path under the project is named by the same relative path in the runner."""
    path = Path(runtime)
    if path.is_absolute() and path.resolve().is_relative_to(root.resolve()):
        return (PurePosixPath(WORKDIR) / path.resolve().relative_to(root.resolve()).as_posix()).as_posix()
    return runtime


def _key(config: CertifyConfig) -> bytes | None:
    if config.key_path is not None:
        return config.key_path.read_bytes()
    return config.key_pem.encode() if config.key_pem else None


def project_archive(root: Path, *, target: str = WORKDIR, skip: Path | None = None) -> bytes:
    """A directory's files under `target`: no VCS, virtualenv, caches, run output or the --out directory."""
    buffer = io.BytesIO()
    skipped = skip.resolve() if skip is not None else None

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = PurePosixPath(info.name).parts[len(PurePosixPath(target).parts) - 1 :]  # below target
        skipped_top = bool(parts) and parts[0] in SKIPPED_TOP
        if skipped_top or any(part in SKIPPED or part.endswith(".egg-info") for part in parts):
            return None
        if info.name.endswith(".pyc"):
            return None
        if skipped is not None and root.joinpath(*parts).resolve() == skipped:
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(root, arcname=target.lstrip("/"), filter=keep)
    return buffer.getvalue()


def _follow(client: Any, runner: Any) -> int:
    """Stream the runner's stdout and stderr here until it exits, forwarding stop signals; its exit code."""
    with _forwarded_signals(runner) as stopped:
        for out, err in client.api.attach(
            runner.id, stdout=True, stderr=True, stream=True, logs=True, demux=True
        ):
            for data, stream in ((out, sys.stdout), (err, sys.stderr)):
                if data:
                    stream.write(data.decode("utf-8", "replace"))
                    stream.flush()
        code = int(runner.wait(timeout=STOP_TIMEOUT_S).get("StatusCode", 2))
    if stopped:
        return 128 + stopped[0]  # the runner cleaned up after the signal; exit as wt does on it
    return code


@contextmanager
def _forwarded_signals(runner: Any) -> Iterator[list[int]]:
    """SIGINT and SIGTERM reach the runner as SIGINT (it unwinds: closes every container, releases
    locks, exits); a second signal kills it at once. The signals received are yielded."""
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:
            runner.kill(signal="SIGINT" if len(received) == 1 else "SIGKILL")
        except DockerException:
            return  # it is gone already

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _collect(runner: Any, out: Path) -> int:
    """The runner's bundle into `out` (already prepared: empty but for the marker), each file atomically."""
    staging = out.parent / f".{out.name}.incoming-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        files = copy_out(runner, BUNDLE, staging)
        for path in files:
            target = out / path.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _archive_if_sealed(out)
    return len(files)


def _archive_if_sealed(out: Path) -> None:
    """DIR.tar.gz beside a sealed bundle, as the runner wrote it beside its own (same files, same bytes)."""
    from windtunnel._bundle import default_archive, layout
    from windtunnel._bundle.archive import write_archive

    if (out / layout.MANIFEST).is_file():
        write_archive(out, default_archive(out))


def _remove(client: Any, runner: Any, session: str, progress: Callable[[str], None]) -> None:
    """Remove the runner, then whatever of its run is left in the engine (normally nothing)."""
    from windtunnel._engine.cleanup import remove_labelled

    deadline = time.monotonic() + STOP_TIMEOUT_S
    with suppress(DockerException):  # gone already, or the engine is: the labels find the rest
        runner.reload()
        if runner.status == "running":
            runner.kill(signal="SIGINT")
            runner.wait(timeout=max(1.0, deadline - time.monotonic()))
    with suppress(DockerException):
        runner.remove(force=True)
    for line in remove_labelled(client, SESSION_LABEL, session):
        progress(f"removed what the runner left: {line}")
