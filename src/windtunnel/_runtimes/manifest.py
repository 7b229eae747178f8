"""runtime.toml: how a runtime under certification is built, wired and what it honours.

schema_version = 1                 # optional: the only version so far
name = "reference"                 # letters, digits, ".", "_", "-"
extends = "../../reference"        # optional: start from another manifest (poison variants); no cycles
[image]
build = "."                        # the build context, relative to this file ...
dockerfile = "Dockerfile"          # relative to `build` (default Dockerfile), or windtunnel:python-runtime
requirements = "requirements.txt"  # relative to this file; wheels for these go into the context's wheels/
packages = ["windtunnel:windtunnel-inject"]      # local projects, relative to this file or windtunnel:NAME:
                                   # their wheels go into package-wheels/, their dependencies into wheels/
args = { RUNTIME_PACKAGE = "my_runtime" }        # build arguments (BASE_IMAGE is always set)
npm = ["@openai/codex@0.171.0-linux-x64"]       # exact npm pins, packed on the host into the context's npm/
# ref = "ghcr.io/acme/agent@sha256:..."   ... or a prebuilt image reference
[env]
rename = { WT_MODEL_BASE_URL = "OPENAI_BASE_URL" }   # map our variables onto the runtime's own
set = { WT_FAULT = "hide_intermediate_tool_calls" }  # fixed extra variables
[config]
supported = ["system_prompt", "sampling.temperature", "mcp_servers", "model.name"]
unsupported = { "sampling.top_p" = "its SDK sends no top_p" }   # optional: fields it knowingly cannot
                                   # honour, each with its reason: still refused, and the checks that
                                   # would measure them report INFO with the reason, never PASSED
[capabilities]
reference = true                   # its model calls go through WT_MODEL_BASE_URL (gateway can script)
state_route = "/wt/state"          # optional: a JSON dump of its internal state (hermetic canary)
port = 8647
[driver]
kind = "container"                 # optional: a driver kind of the windtunnel.drivers registry; left out,
                                   # `python` when plugin= is set, else `container`
plugin = "driver:plugin"           # optional: a Python plugin in this directory instead of a container
[model]
wire = "messages"                  # optional: chat (default), messages or responses: the API its model
                                   # calls speak (WT_MODEL_WIRE); calling another fails check model_wire
side_models = ["claude-haiku-4-5"] # optional: model names of its side calls (titles, summaries), answered
                                   # by the gateway beside the script, never consuming a scripted decision
[faults]                           # optional: the fault policy (windtunnel._runtimes.fault_policy)
retries = 2

`windtunnel:NAME` names a build input that ships with Wind Tunnel itself, wherever the runtime directory
lives (WINDTUNNEL_ASSETS): `windtunnel:python-runtime`, the Dockerfile Python runtimes share, and
`windtunnel:windtunnel-inject`, the Contract C server library. A runtime directory copied anywhere builds
the same image.

Every file is read through its model (windtunnel._runtimes.manifest_model): unknown keys and tables are
refused with the closest known one suggested, types are strict and ports are 1-65535, so each problem is one
line naming the file, the key, the value and the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from windtunnel._configfile import read_toml, shown, toml_value, validated
from windtunnel._runtimes.fault_policy import FaultPolicy
from windtunnel._runtimes.manifest_model import (
    CONFIG_FIELDS,
    CONTRACT_C_ENV,
    DEFAULT_WIRE,
    ImageTable,
    RuntimeToml,
)
from windtunnel._runtimes.mcp_client import McpClientPolicy
from windtunnel.errors import ConfigFileError

__all__ = [
    "ASSET_PREFIX",
    "CONFIG_FIELDS",
    "DEFAULT_PORT",
    "MANIFEST",
    "WINDTUNNEL_ASSETS",
    "RuntimeManifest",
    "check_buildable",
    "lenient_name",
    "load_manifest",
]

MANIFEST = "runtime.toml"
ASSET_PREFIX = "windtunnel:"
WINDTUNNEL_ASSETS: Mapping[str, str] = {
    "python-runtime": "containers/python-runtime.Dockerfile",
    "windtunnel-inject": "packages/windtunnel-inject",
}
"""Build inputs of Wind Tunnel's own, by the name a runtime.toml gives them, relative to its checkout."""
DEFAULT_PORT = 8647


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeManifest:
    name: str
    path: Path
    build_dir: Path | None = None
    dockerfile: str = "Dockerfile"
    requirements: Path | None = None
    packages: tuple[Path, ...] = ()
    build_args: Mapping[str, str] = field(default_factory=dict)
    npm: tuple[str, ...] = ()
    """Exact npm pins packed on the host into the build context's npm/ (windtunnel._engine.npm_packs)."""
    image_ref: str | None = None
    env_rename: Mapping[str, str] = field(default_factory=dict)
    env_set: Mapping[str, str] = field(default_factory=dict)
    supported: frozenset[str] = frozenset()
    unsupported: Mapping[str, str] = field(default_factory=dict)
    """`[config] unsupported`: fields it knowingly cannot honour, each with the reason (refused all the same)."""
    reference: bool = False
    state_route: str | None = None
    port: int = DEFAULT_PORT
    plugin: str | None = None
    kind: str | None = None
    """`[driver] kind` as written; `driver_kind` is the one the resolver looks up."""
    description: str = ""
    wire: str = DEFAULT_WIRE
    """`[model] wire`: the model API the runtime speaks (chat, messages, responses), handed as WT_MODEL_WIRE."""
    side_models: tuple[str, ...] = ()
    """`[model] side_models`: model names the gateway answers beside the script (side traffic)."""
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    """`[faults]`: the fault policy the fault checks hold the runtime to (default: no retries)."""
    mcp: McpClientPolicy = field(default_factory=McpClientPolicy)
    """`[mcp]`: what its MCP client declares it hands the model (the mcp_client checks)."""

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def driver_kind(self) -> str:
        """The driver kind that makes this runtime's plugin: `[driver] kind`, else inferred as it always was
        (`python` when `[driver] plugin` is set, else `container`)."""
        if self.kind is not None:
            return self.kind
        return "python" if self.plugin else "container"


def _error(path: Path, field_name: str, problem: str, hint: str) -> ConfigFileError:
    return ConfigFileError(
        f"{shown(path)}: {field_name} {problem}", hint=hint, path=str(path), field=field_name
    )


def _located(value: str, path: Path, field_name: str) -> Path:
    """`windtunnel:NAME` as the Wind Tunnel checkout holds it, else `value` relative to runtime.toml."""
    if not value.startswith(ASSET_PREFIX):
        return (path.parent / value).resolve()
    from windtunnel._config import bundled_root

    name, root = value.removeprefix(ASSET_PREFIX), bundled_root()
    if name not in WINDTUNNEL_ASSETS:
        raise _error(
            path,
            field_name,
            f"names {value!r}, which Wind Tunnel does not ship",
            f"use one of {', '.join(ASSET_PREFIX + known for known in WINDTUNNEL_ASSETS)}, or a path",
        )
    if root is None:
        raise _error(
            path,
            field_name,
            f"names {value!r}, but this Wind Tunnel is not run from a checkout that holds it",
            "install Wind Tunnel from its repository (`pip install -e .` of a clone), or name a path",
        )
    return root / WINDTUNNEL_ASSETS[name]


def _dockerfile(image: ImageTable, path: Path, default: str) -> str:
    """The Dockerfile relative to the build directory, or the absolute path of a `windtunnel:` one."""
    value = image.dockerfile
    if value is None:
        return default
    if value.startswith(ASSET_PREFIX):
        return str(_located(value, path, "image.dockerfile"))
    return value


def manifest_path(path: Path) -> Path:
    """The runtime.toml `path` names: the file itself, or the one in a directory."""
    return (path / MANIFEST if path.is_dir() else path).resolve()


def load_manifest(path: Path) -> RuntimeManifest:
    """Read a runtime.toml (or the one in a directory) through its model, following `extends`; a problem
    is one ConfigFileError naming the file, the key, the value and the fix. An `extends` cycle is one too."""
    path = manifest_path(path)
    if not path.is_file():
        raise ConfigFileError(
            f"no {MANIFEST} at {shown(path)}", hint="a runtime directory needs a runtime.toml", path=str(path)
        )
    return _load(path, ())


def _load(path: Path, chain: tuple[Path, ...]) -> RuntimeManifest:
    document = validated(RuntimeToml, read_toml(path), path)
    parent = None
    if document.extends is not None:
        parent = _load(_extended(path, document.extends, chain), (*chain, path))
    return _merge(parent, document, path)


def _extended(path: Path, extends: str, chain: tuple[Path, ...]) -> Path:
    """The runtime.toml that `extends` names: it must exist and must not lead back along `chain`."""
    target = manifest_path(path.parent / extends)
    where = f"{shown(path)}: extends = {toml_value(extends)}"
    if target == path or target in chain:
        loop = " -> ".join(shown(step) for step in (*chain, path, target)[-4:])
        raise ConfigFileError(
            f"{where}: leads back to itself ({loop})",
            hint="point extends at the runtime this one varies, never at itself or at one that extends it",
            path=str(path),
            field="extends",
        )
    if not target.is_file():
        raise ConfigFileError(
            f"{where}: there is no {MANIFEST} at {shown(target)}",
            hint="point extends at the directory (or runtime.toml) of the runtime this one varies",
            path=str(path),
            field="extends",
        )
    return target


def _merge(parent: RuntimeManifest | None, document: RuntimeToml, path: Path) -> RuntimeManifest:
    """This file's keys over its parent's (a variant inherits what it leaves out)."""
    name = document.name or (parent.name if parent else None)
    if not name:
        raise _error(path, "name", "is missing", 'add name = "my-runtime"')
    base = parent or RuntimeManifest(name=name, path=path)
    image, env, caps, model = document.image, document.env, document.capabilities, document.model
    supported = document.config.supported
    merged = RuntimeManifest(
        name=name,
        path=path,
        build_dir=(path.parent / image.build).resolve() if image.build is not None else base.build_dir,
        dockerfile=_dockerfile(image, path, base.dockerfile),
        requirements=(path.parent / image.requirements).resolve()
        if image.requirements is not None
        else base.requirements,
        packages=tuple(_located(entry, path, "image.packages") for entry in image.packages)
        if image.packages is not None
        else base.packages,
        build_args={**base.build_args, **(image.args or {})},
        npm=tuple(image.npm) if image.npm is not None else base.npm,
        image_ref=image.ref if image.ref is not None else base.image_ref,
        env_rename={**base.env_rename, **(env.rename or {})},
        env_set={**base.env_set, **(env.set or {})},
        supported=frozenset(supported) if supported is not None else base.supported,
        unsupported=dict(document.config.unsupported)
        if document.config.unsupported is not None
        else base.unsupported,
        reference=caps.reference if caps.reference is not None else base.reference,
        state_route=caps.state_route if caps.state_route is not None else base.state_route,
        port=caps.port if caps.port is not None else base.port,
        plugin=document.driver.plugin if document.driver.plugin is not None else base.plugin,
        kind=document.driver.kind if document.driver.kind is not None else base.kind,
        description=document.description if document.description is not None else base.description,
        wire=model.wire if model.wire is not None else base.wire,
        side_models=tuple(model.side_models) if model.side_models is not None else base.side_models,
        faults=base.faults.over(document.faults),
        mcp=base.mcp.over(document.mcp),
    )
    _check_merged(merged)
    return merged


def _check_merged(manifest: RuntimeManifest) -> None:
    """What no single key can say alone: one image source, a config field supported or unsupported (not
    both), renames of variables the runtime is handed."""
    path = manifest.path
    if manifest.build_dir is not None and manifest.image_ref is not None:
        raise _error(
            path,
            "image.ref",
            f"names the prebuilt image {manifest.image_ref!r}, but [image] build names a directory to build too",
            "keep one: [image] ref for a prebuilt image, or [image] build (and its Dockerfile) to build one",
        )
    both = sorted(manifest.supported & set(manifest.unsupported))
    if both:
        raise _error(
            path,
            "config.unsupported",
            f"names {both[0]}, which [config] supported names too",
            f"keep {both[0]} in one of them: supported if the runtime honours it, unsupported (with the "
            "reason) if it cannot",
        )
    handed = CONTRACT_C_ENV | set(manifest.env_set)
    for name in manifest.env_rename:
        if name not in handed:
            close = difflib.get_close_matches(name, sorted(handed), n=1)
            guess = f"; did you mean {close[0]}?" if close else ""
            raise _error(
                path,
                "env.rename",
                f"renames {name}, which Contract C does not define{guess}",
                f"rename only the variables a runtime is handed ({', '.join(sorted(CONTRACT_C_ENV))}) or "
                "those [env] set defines",
            )


def lenient_name(path: Path) -> str | None:
    """The `name` a runtime.toml gives, read without checking anything else (None when not even that reads):
    how a lookup by name tells whether a broken runtime.toml is the one asked for."""
    try:
        name = read_toml(manifest_path(path)).get("name")
    except ConfigFileError:
        return None
    return name if isinstance(name, str) else None


def check_buildable(manifest: RuntimeManifest) -> None:
    """A container runtime needs either a build directory with its Dockerfile or an image reference; a
    requirements file and local packages it names must exist."""
    if manifest.plugin or manifest.image_ref:
        return
    if manifest.build_dir is None or not manifest.build_dir.is_dir():
        raise _error(
            manifest.path,
            "image",
            "names neither a buildable directory nor an image reference",
            'add [image] build = "." next to a Dockerfile, or [image] ref = "registry/image:tag"',
        )
    if not (manifest.build_dir / manifest.dockerfile).is_file():
        raise _error(
            manifest.path,
            "image.dockerfile",
            f"names {manifest.dockerfile!r}, which is not a file in {manifest.build_dir}",
            "name the Dockerfile relative to [image] build, or drop the key to use Dockerfile",
        )
    if manifest.requirements is not None and not manifest.requirements.is_file():
        raise _error(
            manifest.path,
            "image.requirements",
            f"names {manifest.requirements}, which does not exist",
            "name a requirements file relative to runtime.toml, or drop the key",
        )
    for package in manifest.packages:
        if not (package / "pyproject.toml").is_file():
            raise _error(
                manifest.path,
                "image.packages",
                f"names {package}, which is not a Python project (no pyproject.toml there)",
                "name each local package's directory relative to runtime.toml, or Wind Tunnel's own "
                "library as windtunnel:windtunnel-inject",
            )
