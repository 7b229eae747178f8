"""runtime.toml: how a runtime under certification is built, wired and what it honours.

name = "reference"
extends = "../../reference"        # optional: start from another manifest (poison variants)
[image]
build = "."                        # the build context, relative to this file ...
dockerfile = "Dockerfile"          # relative to `build` (default Dockerfile), or windtunnel:python-runtime
requirements = "requirements.txt"  # relative to this file; wheels for these go into the context's wheels/
packages = ["windtunnel:windtunnel-inject"]      # local projects, relative to this file or windtunnel:NAME:
                                   # their wheels go into package-wheels/, their dependencies into wheels/
args = { RUNTIME_PACKAGE = "my_runtime" }        # build arguments (BASE_IMAGE is always set)
# ref = "ghcr.io/acme/agent@sha256:..."   ... or a prebuilt image reference
[env]
rename = { WT_MODEL_BASE_URL = "OPENAI_BASE_URL" }   # map our variables onto the runtime's own
set = { WT_FAULT = "hide_intermediate_tool_calls" }  # fixed extra variables
[config]
supported = ["system_prompt", "sampling.temperature", "mcp_servers", "model.name"]
[capabilities]
reference = true                   # its model calls go through WT_MODEL_BASE_URL (gateway can script)
state_route = "/wt/state"          # optional: a JSON dump of its internal state (hermetic canary)
port = 8647
[driver]
plugin = "driver:plugin"           # optional: a Python plugin in this directory instead of a container

`windtunnel:NAME` names a build input that ships with Wind Tunnel itself, wherever the runtime directory
lives (WINDTUNNEL_ASSETS): `windtunnel:python-runtime`, the Dockerfile Python runtimes share, and
`windtunnel:windtunnel-inject`, the Contract C server library. A runtime directory copied anywhere builds
the same image.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel.errors import ConfigFileError

MANIFEST = "runtime.toml"
ASSET_PREFIX = "windtunnel:"
WINDTUNNEL_ASSETS: Mapping[str, str] = {
    "python-runtime": "containers/python-runtime.Dockerfile",
    "windtunnel-inject": "packages/windtunnel-inject",
}
"""Build inputs of Wind Tunnel's own, by the name a runtime.toml gives them, relative to its checkout."""
DEFAULT_PORT = 8647
CONFIG_FIELDS = frozenset(
    {
        "system_prompt",
        "persona_doc",
        "skills",
        "mcp_servers",
        "model.name",
        "model.quant",
        "sampling.temperature",
        "sampling.top_p",
        "sampling.tool_choice",
        "sampling.max_tokens",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeManifest:
    name: str
    path: Path
    build_dir: Path | None = None
    dockerfile: str = "Dockerfile"
    requirements: Path | None = None
    packages: tuple[Path, ...] = ()
    build_args: Mapping[str, str] = field(default_factory=dict)
    image_ref: str | None = None
    env_rename: Mapping[str, str] = field(default_factory=dict)
    env_set: Mapping[str, str] = field(default_factory=dict)
    supported: frozenset[str] = frozenset()
    reference: bool = False
    state_route: str | None = None
    port: int = DEFAULT_PORT
    plugin: str | None = None
    description: str = ""

    @property
    def directory(self) -> Path:
        return self.path.parent


def _error(path: Path, field_name: str, problem: str, hint: str) -> ConfigFileError:
    return ConfigFileError(f"{path}: {field_name} {problem}", hint=hint, path=str(path), field=field_name)


def _table(data: Mapping[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _error(path, f"[{key}]", "must be a table", f"write [{key}] followed by key = value lines")
    return value


def _str_map(table: Mapping[str, Any], key: str, path: Path, where: str) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _error(
            path, f"{where}.{key}", "must map names to strings", f'write {key} = {{ NAME = "value" }}'
        )
    return dict(value)


def _build_args(image: Mapping[str, Any], path: Path) -> dict[str, str]:
    args = _str_map(image, "args", path, "image")
    if "BASE_IMAGE" in args:
        raise _error(
            path,
            "image.args.BASE_IMAGE",
            "is set by Wind Tunnel (the base image it bootstraps or WT_BASE_IMAGE)",
            "drop it from [image] args; set WT_BASE_IMAGE to build on another base image",
        )
    return args


def _packages(image: Mapping[str, Any], path: Path) -> tuple[Path, ...]:
    packages = image["packages"]
    if not isinstance(packages, list) or not all(isinstance(entry, str) for entry in packages):
        raise _error(
            path,
            "image.packages",
            "must be a list of directories",
            'write packages = ["windtunnel:windtunnel-inject"] or directories relative to runtime.toml',
        )
    return tuple(_located(entry, path, "image.packages") for entry in packages)


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


def _dockerfile(image: Mapping[str, Any], path: Path, default: str) -> str:
    """The Dockerfile relative to the build directory, or the absolute path of a `windtunnel:` one."""
    value = image.get("dockerfile", default)
    if not isinstance(value, str) or not value:
        raise _error(path, "image.dockerfile", "must be a file name", 'write dockerfile = "Dockerfile"')
    if value.startswith(ASSET_PREFIX):
        return str(_located(value, path, "image.dockerfile"))
    return value


def load_manifest(path: Path) -> RuntimeManifest:
    """Read a runtime.toml (or the one in a directory), following `extends`."""
    path = (path / MANIFEST if path.is_dir() else path).resolve()
    if not path.is_file():
        raise ConfigFileError(
            f"no {MANIFEST} at {path}", hint="a runtime directory needs a runtime.toml", path=str(path)
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(
            f"{path} is not valid TOML: {exc}", hint="fix the syntax", path=str(path)
        ) from exc
    parent = load_manifest(path.parent / str(data["extends"])) if "extends" in data else None
    return _merge(parent, data, path)


def _merge(parent: RuntimeManifest | None, data: Mapping[str, Any], path: Path) -> RuntimeManifest:
    name = data.get("name", parent.name if parent else None)
    if not isinstance(name, str) or not name:
        raise _error(path, "name", "is missing", 'add name = "my-runtime"')
    image, env = _table(data, "image", path), _table(data, "env", path)
    config, caps, driver = (
        _table(data, "config", path),
        _table(data, "capabilities", path),
        _table(data, "driver", path),
    )
    supported = config.get("supported", sorted(parent.supported) if parent else [])
    unknown = sorted(set(supported) - CONFIG_FIELDS) if isinstance(supported, list) else ["<not a list>"]
    if unknown:
        raise _error(
            path,
            "config.supported",
            f"names unknown fields {unknown}",
            f"use names from {sorted(CONFIG_FIELDS)}",
        )
    base = parent or RuntimeManifest(name=name, path=path)
    build = image.get("build")
    requirements = image.get("requirements")
    plugin = driver.get("plugin", base.plugin if parent else None)
    build_dir = (path.parent / build).resolve() if isinstance(build, str) else base.build_dir
    return RuntimeManifest(
        name=name,
        path=path,
        build_dir=build_dir,
        dockerfile=_dockerfile(image, path, base.dockerfile),
        requirements=(path.parent / requirements).resolve()
        if isinstance(requirements, str)
        else base.requirements,
        packages=_packages(image, path) if "packages" in image else base.packages,
        build_args={**base.build_args, **_build_args(image, path)},
        image_ref=image.get("ref", base.image_ref),
        env_rename={**base.env_rename, **_str_map(env, "rename", path, "env")},
        env_set={**base.env_set, **_str_map(env, "set", path, "env")},
        supported=frozenset(supported),
        reference=bool(caps.get("reference", base.reference)),
        state_route=caps.get("state_route", base.state_route),
        port=int(caps.get("port", base.port)),
        plugin=plugin if isinstance(plugin, str) else None,
        description=str(data.get("description", base.description)),
    )


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
