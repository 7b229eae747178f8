"""Configuration, read in one place: CLI values, `[tool.windtunnel]` or windtunnel.toml, and WT_* env.

Nothing reads the environment at import time; `load_settings()` is called once per command.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel._core.ladder import Ladder, parse_ladder
from windtunnel._core.rates import Price, parse_pricing
from windtunnel.errors import ConfigFileError

SUITE_VERSION = "4"
"""The version of the conformance suite and the bundled packs, defined here only: the newest requirement set
(conformance/requirements/v<N>.toml), the one a project gets when it names none, and a bundle's
suite_version. 2 added tool_call_ids and config_reaches_model, with stricter checks; 3 added
tool_results_reach_model."""

DEFAULT_PACKS: tuple[str, ...] = ()
KNOWN_KEYS = ("runtimes", "packs", "requirement_set", "runs_dir", "pricing", "ladder")
"""Every key of [tool.windtunnel] / windtunnel.toml; any other is an error (a typo must not pass silently)."""
ENTRY_KEYS = ("name", "build", "image", "manifest")
WINDTUNNEL_DOCKERFILE = Path("containers") / "windtunnel.Dockerfile"
"""The gateway/mocks image's Dockerfile; it marks a Wind Tunnel checkout (see bundled_root()). Not docker/: a
top-level docker/ directory shadows the docker package for mypy (noxfile.py puts the repo root on its search
path)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeEntry:
    """A runtime to certify: a registered name; or a build directory (Dockerfile + runtime.toml); or a
    prebuilt Contract C image, with an optional runtime.toml (`manifest`) stating what it supports.
    Paths are relative to the config file's directory."""

    name: str
    build: str | None = None
    image: str | None = None
    manifest: str | None = None


def default_lock_dir() -> Path:
    """Where machine-wide runtime locks live unless WT_LOCK_DIR says otherwise."""
    return Path.home() / ".cache" / "windtunnel" / "locks"


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    root: Path
    source: Path | None
    runtimes: tuple[RuntimeEntry, ...] = ()
    packs: tuple[str, ...] = DEFAULT_PACKS
    requirement_set: str = SUITE_VERSION
    runs_dir: Path = Path("runs")
    lock_dir: Path = field(default_factory=default_lock_dir)
    env: Mapping[str, str] = field(default_factory=dict)
    pricing: Mapping[str, Price] = field(default_factory=dict)
    """Rates per model label ([tool.windtunnel.pricing.<label>]; windtunnel._core.rates)."""
    ladder: Ladder | None = None
    """The allowed model labels ([tool.windtunnel.ladder]; windtunnel._core.ladder); None: no ladder. The
    resolver (windtunnel._runtimes.resolve) holds every runtime it finds to it."""

    def env_value(self, name: str, default: str | None = None) -> str | None:
        return self.env.get(name, default)


def _find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest directory with a config wins; in one directory windtunnel.toml wins over pyproject.toml.
    A pyproject.toml without [tool.windtunnel] is no config: the search goes on upwards."""
    for directory in (start, *start.parents):
        dedicated = directory / "windtunnel.toml"
        if dedicated.is_file():
            return dedicated, _read(dedicated)
        project = directory / "pyproject.toml"
        if project.is_file():
            table = _read(project).get("tool", {}).get("windtunnel")
            if isinstance(table, dict):
                return project, table
            if table is not None:
                raise ConfigFileError(
                    f"{project}: tool.windtunnel must be a table, found {table!r}",
                    hint="write a [tool.windtunnel] section with key = value lines",
                    path=str(project),
                    field="tool.windtunnel",
                )
    return None


def _where(path: Path) -> str:
    return f"{path} [tool.windtunnel]" if path.name == "pyproject.toml" else str(path)


def _check_keys(table: Mapping[str, Any], known: tuple[str, ...], where: str, path: Path) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigFileError(
            f"{where}: unknown key {', '.join(map(repr, unknown))}; known keys: {', '.join(known)}",
            hint="fix the spelling or remove the key",
            path=str(path),
            field=unknown[0],
        )


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(
            f"{path} is not valid TOML: {exc}", hint="fix the syntax at the line shown", path=str(path)
        ) from exc


def _strings(table: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigFileError(
            f"{_where(path)}: {key} must be a list of strings, found {value!r}",
            hint=f'write {key} = ["..."]',
            path=str(path),
            field=key,
        )
    return tuple(value)


def _scalar(table: Mapping[str, Any], key: str, path: Path | None) -> str | None:
    """A string (or integer) value: requirement_set = "1" or 1, runs_dir = "runs"."""
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        assert path is not None  # a value came from a file
        raise ConfigFileError(
            f"{_where(path)}: {key} must be a string, found {value!r}",
            hint=f'write {key} = "..."',
            path=str(path),
            field=key,
        )
    return str(value)


_ENTRY_HINT = (
    'write runtimes = ["reference", {name = "mine", build = "runtimes/mine"}, '
    '{name = "theirs", image = "registry/agent:1.2"}]'
)


def _runtimes(table: Mapping[str, Any], path: Path) -> tuple[RuntimeEntry, ...]:
    items = table.get("runtimes", [])
    if not isinstance(items, list):
        raise _entry_error(path, f"runtimes must be a list, found {items!r}")
    entries = [_entry(item, path) for item in items]
    names = [entry.name for entry in entries]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise _entry_error(path, f"runtimes names {', '.join(map(repr, repeated))} more than once")
    return tuple(entries)


def _entry(item: Any, path: Path) -> RuntimeEntry:
    if isinstance(item, str) and item:
        return RuntimeEntry(name=item)
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        raise _entry_error(path, f"runtimes entry {item!r} is neither a name nor a table with name=")
    _check_keys(item, ENTRY_KEYS, f"{_where(path)}: runtimes entry {item['name']!r}", path)
    values = {key: item.get(key) for key in ("build", "image", "manifest")}
    wrong = [key for key, value in values.items() if value is not None and not isinstance(value, str)]
    if wrong:
        raise _entry_error(path, f"runtimes entry {item['name']!r}: {wrong[0]} must be a string")
    if values["build"] is not None and values["image"] is not None:
        raise _entry_error(path, f"runtimes entry {item['name']!r} has both build= and image=; give one")
    if values["manifest"] is not None and values["image"] is None:
        raise _entry_error(
            path, f"runtimes entry {item['name']!r}: manifest= describes an image=; a build= dir has its own"
        )
    return RuntimeEntry(name=item["name"], **values)


def _entry_error(path: Path, message: str) -> ConfigFileError:
    where = _where(path)
    return ConfigFileError(f"{where}: {message}", hint=_ENTRY_HINT, path=str(path), field="runtimes")


def load_settings(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read the project's config (nearest windtunnel.toml or pyproject.toml with [tool.windtunnel])."""
    cwd = (cwd or Path.cwd()).resolve()
    env = dict(os.environ if env is None else env)
    found = _find_config(cwd)
    root: Path = cwd
    source: Path | None = None
    table: dict[str, Any] = {}
    if found is not None:
        source, table = found
        root = source.parent
        _check_keys(table, KNOWN_KEYS, _where(source), source)
    runs_dir = Path(env.get("WT_RUNS_DIR") or _scalar(table, "runs_dir", source) or root / "runs")
    lock_dir = Path(env.get("WT_LOCK_DIR") or default_lock_dir())
    requirement = _scalar(table, "requirement_set", source) or SUITE_VERSION
    return Settings(
        root=root,
        source=source,
        runtimes=_runtimes(table, source) if source else (),
        packs=_strings(table, "packs", source) if source else (),
        requirement_set=str(requirement),
        runs_dir=runs_dir if runs_dir.is_absolute() else root / runs_dir,
        lock_dir=lock_dir,
        env=env,
        pricing=parse_pricing(table["pricing"], _where(source), source)
        if source and "pricing" in table
        else {},
        ladder=parse_ladder(table["ladder"], _where(source), source)
        if source and "ladder" in table
        else None,
    )


def bundled_root() -> Path | None:
    """The Wind Tunnel checkout this package runs from (its runtimes/, scenarios/, conformance/ and image
    sources), or None for an installed wheel."""
    import windtunnel

    root = Path(windtunnel.__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / WINDTUNNEL_DOCKERFILE).is_file() else None


def resolve_packs(settings: Settings, explicit: Sequence[str]) -> tuple[tuple[str, ...], Path]:
    """Pack references to load and the directory they are relative to: --pack-path wins over config."""
    if explicit:
        return tuple(explicit), Path.cwd()
    return settings.packs, settings.root
