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

from windtunnel.errors import ConfigFileError

DEFAULT_PACKS: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeEntry:
    """A runtime to certify: a registered name, with an optional build directory or image reference."""

    name: str
    build: str | None = None
    image: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    root: Path
    source: Path | None
    runtimes: tuple[RuntimeEntry, ...] = ()
    packs: tuple[str, ...] = DEFAULT_PACKS
    requirement_set: str = "1"
    runs_dir: Path = Path("runs")
    lock_dir: Path = Path.home() / ".cache" / "windtunnel" / "locks"
    env: Mapping[str, str] = field(default_factory=dict)

    def env_value(self, name: str, default: str | None = None) -> str | None:
        return self.env.get(name, default)


def _find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    for directory in (start, *start.parents):
        dedicated = directory / "windtunnel.toml"
        if dedicated.is_file():
            return dedicated, _read(dedicated)
        project = directory / "pyproject.toml"
        if project.is_file():
            table = _read(project).get("tool", {}).get("windtunnel")
            if isinstance(table, dict):
                return project, table
    return None


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
            f"{path}: [tool.windtunnel] {key} must be a list of strings, found {value!r}",
            hint=f'write {key} = ["..."]',
            path=str(path),
            field=key,
        )
    return tuple(value)


def _runtimes(table: Mapping[str, Any], path: Path) -> tuple[RuntimeEntry, ...]:
    entries: list[RuntimeEntry] = []
    for item in table.get("runtimes", []):
        if isinstance(item, str):
            entries.append(RuntimeEntry(name=item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            entries.append(RuntimeEntry(name=item["name"], build=item.get("build"), image=item.get("image")))
        else:
            raise ConfigFileError(
                f"{path}: runtimes entry {item!r} is neither a name nor a table with name=",
                hint='write runtimes = ["reference"] or [{name = "mine", build = "runtimes/mine"}]',
                path=str(path),
                field="runtimes",
            )
    return tuple(entries)


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
    runs_dir = Path(env.get("WT_RUNS_DIR") or table.get("runs_dir") or root / "runs")
    lock_dir = Path(env.get("WT_LOCK_DIR") or Path.home() / ".cache" / "windtunnel" / "locks")
    requirement = table.get("requirement_set", "1")
    return Settings(
        root=root,
        source=source,
        runtimes=_runtimes(table, source) if source else (),
        packs=_strings(table, "packs", source) if source else (),
        requirement_set=str(requirement),
        runs_dir=runs_dir if runs_dir.is_absolute() else root / runs_dir,
        lock_dir=lock_dir,
        env=env,
    )


def resolve_packs(settings: Settings, explicit: Sequence[str]) -> tuple[tuple[str, ...], Path]:
    """Pack references to load and the directory they are relative to: --pack-path wins over config."""
    if explicit:
        return tuple(explicit), Path.cwd()
    return settings.packs, settings.root
