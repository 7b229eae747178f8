"""The Docker engine connection: one docker-py client, or one clear error saying how to get an engine."""

from __future__ import annotations

import socket
from collections.abc import Mapping

import docker
from docker.errors import DockerException

from windtunnel._env_values import process_env
from windtunnel.errors import EngineUnavailableError

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
DEFAULT_TIMEOUT_S = 300.0
"""Image builds and imports stream for minutes; the client's read timeout must outlast them."""

ENGINE_HINT = (
    "install and start a Docker engine (Debian: `apt-get install docker.io`, then `dockerd &` as root "
    "or `systemctl start docker`), or point DOCKER_HOST at a running one"
)


def docker_client(
    *,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> docker.DockerClient:
    """A client that has answered a ping. `base_url` wins over DOCKER_HOST, which wins over the docker
    context (DOCKER_CONTEXT, else the current one of ~/.docker/config.json), which wins over the socket.

    Raises EngineUnavailableError naming the address tried and the engine's answer.
    """
    environ = dict(process_env() if env is None else env)
    if base_url is None and not environ.get("DOCKER_HOST"):
        base_url = context_host(environ)
    target = base_url or environ.get("DOCKER_HOST") or DEFAULT_SOCKET
    if target.startswith("unix://"):
        _reach_socket(target, timeout)
    client: docker.DockerClient | None = None
    try:
        if base_url is None:
            client = docker.DockerClient.from_env(timeout=int(timeout), environment=environ)
        else:
            client = docker.DockerClient(base_url=base_url, timeout=int(timeout))
        client.ping()
    except (DockerException, OSError) as exc:
        if client is not None:
            client.close()
        raise EngineUnavailableError(
            f"no Docker engine answered at {target} (expected a ping reply, got: {_reason(exc)})",
            hint=ENGINE_HINT,
            address=target,
        ) from exc
    return client


def context_host(env: Mapping[str, str]) -> str | None:
    """The engine address of the docker context in use (None for the default context, or none found)."""
    from docker.context import ContextAPI
    from docker.errors import ContextNotFound

    name = env.get("DOCKER_CONTEXT") or None
    try:
        context = ContextAPI.get_context(name)
    except (ContextNotFound, DockerException, OSError, ValueError) as exc:
        raise EngineUnavailableError(
            f"docker context {name or '(current)'} cannot be read: {exc}",
            hint="`docker context ls` lists the contexts; set DOCKER_CONTEXT to one, or DOCKER_HOST",
            address=name or "",
        ) from exc
    if context is None and name is not None:
        raise EngineUnavailableError(
            f"DOCKER_CONTEXT names the docker context {name!r}, which does not exist",
            hint="`docker context ls` lists the contexts; set DOCKER_CONTEXT to one, or unset it",
            address=name,
        )
    if context is None or context.name == "default":
        return None
    host = context.Host
    return str(host) if host else None


def _reach_socket(target: str, timeout: float) -> None:
    # docker-py leaks the socket of a failed unix connect (an unclosed-socket warning, an error under
    # pytest's -W error), so a missing or dead socket is found here first, with the socket closed.
    path = target.removeprefix("unix://")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(min(timeout, 10.0))
            probe.connect(path)
    except OSError as exc:
        raise EngineUnavailableError(
            f"no Docker engine answered at {target} (expected a listening socket, got: {_reason(exc)})",
            hint=ENGINE_HINT,
            address=target,
        ) from exc


def engine_version(client: docker.DockerClient) -> str:
    """The engine's version string, for run.json and error messages."""
    info: dict[str, object] = client.version()
    return str(info.get("Version", "unknown"))


def _reason(exc: BaseException) -> str:
    # docker-py wraps the socket error several layers deep; the innermost cause is the useful part.
    while (inner := exc.__cause__ or exc.__context__) is not None:
        exc = inner
    return f"{type(exc).__name__}: {exc}"
