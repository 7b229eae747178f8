"""Configuration, read in one place: CLI values, `[tool.windtunnel]` or windtunnel.toml, and WT_* env.

Nothing reads the environment at import time; `load_settings()` is called once per command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import field_validator, model_validator

from windtunnel._configfile import Strict, read_toml, shown, spec, toml_value, validated
from windtunnel._core.ladder import LADDER_HINT, Ladder, parse_ladder
from windtunnel._core.rates import PRICING_HINT, Price, parse_pricing
from windtunnel._env_values import process_env
from windtunnel.errors import ConfigFileError

SUITE_VERSION = "5"
"""The version of the conformance suite and the bundled packs, defined here only: the newest requirement set
(conformance/requirements/v<N>.toml), the one a project gets when it names none, and a bundle's
suite_version. 2 added tool_call_ids and config_reaches_model, with stricter checks; 3 added
tool_results_reach_model; 4 the three views, tool errors and the final answer; 5 model_wire."""

DEFAULT_PACKS: tuple[str, ...] = ()
_ENTRY_EXAMPLE = (
    'runtimes = ["reference", {name = "mine", build = "runtimes/mine"}, '
    '{name = "theirs", image = "registry/agent:1.2"}]'
)
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


def default_control_cache_dir() -> Path:
    """Where `wt certify` keeps the reference control's selftest result (windtunnel._pipeline.control_cache)."""
    return Path.home() / ".cache" / "windtunnel" / "control"


def default_lock_dir() -> Path:
    """Where machine-wide locks (runtimes, image builds) live unless WT_LOCK_DIR says otherwise."""
    return Path.home() / ".cache" / "windtunnel" / "locks"


def lock_dir(env: Mapping[str, str]) -> Path:
    """WT_LOCK_DIR from `env`, else the default: one directory for every machine-wide lock."""
    return Path(env.get("WT_LOCK_DIR") or default_lock_dir())


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


class EntryModel(Strict):
    """One `runtimes` entry that is a table (a bare string is `{name = "..."}`)."""

    name: str = spec(..., expect="a runtime name", example='name = "mine" in the entry', min_length=1)
    build: str | None = spec(
        expect="a runtime directory relative to the config file", example=_ENTRY_EXAMPLE, min_length=1
    )
    image: str | None = spec(expect="an image reference", example=_ENTRY_EXAMPLE, min_length=1)
    manifest: str | None = spec(
        expect="a runtime.toml relative to the config file", example=_ENTRY_EXAMPLE, min_length=1
    )

    @model_validator(mode="after")
    def _one_source(self) -> EntryModel:
        if self.build is not None and self.image is not None:
            raise ValueError(f"runtimes entry {self.name!r} has both build= and image=; give one")
        if self.manifest is not None and self.image is None:
            raise ValueError(
                f"runtimes entry {self.name!r}: manifest= describes an image=; a build= dir has its own"
            )
        return self


class ProjectModel(Strict):
    """`[tool.windtunnel]` of pyproject.toml, or windtunnel.toml: every key, typed."""

    runtimes: list[EntryModel] = spec(
        [],
        expect="a list of runtime names and {name = ..., build|image = ...} tables",
        example=_ENTRY_EXAMPLE,
    )
    packs: list[str] = spec([], expect="a list of strings", example='packs = ["scenarios/support_desk"]')
    requirement_set: str | None = spec(
        expect='a requirement set number, e.g. "3"',
        example=f'requirement_set = "{SUITE_VERSION}"',
        pattern=r"^[1-9][0-9]{0,3}$",
    )
    runs_dir: str | None = spec(expect="a directory, as a string", example='runs_dir = "runs"', min_length=1)
    # The rates and the ladder are checked inside by their own parsers (windtunnel._core.rates, .ladder).
    pricing: dict[str, Any] | None = spec(expect="a table of model labels", example=PRICING_HINT)
    ladder: dict[str, Any] | None = spec(expect="a table", example=LADDER_HINT)

    @field_validator("runtimes", mode="before")
    @classmethod
    def _names_are_entries(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("requirement_set", mode="before")
    @classmethod
    def _number_is_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("runtimes")
    @classmethod
    def _unique(cls, entries: list[EntryModel]) -> list[EntryModel]:
        names = [entry.name for entry in entries]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"names {', '.join(map(repr, repeated))} more than once")
        return entries


KNOWN_KEYS = tuple(ProjectModel.model_fields)
"""Every key of [tool.windtunnel] / windtunnel.toml; any other is an error (a typo must not pass silently)."""


def _find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest directory with a config wins; in one directory windtunnel.toml wins over pyproject.toml.
    A pyproject.toml without [tool.windtunnel] is no config: the search goes on upwards."""
    for directory in (start, *start.parents):
        dedicated = directory / "windtunnel.toml"
        if dedicated.is_file():
            return dedicated, read_toml(dedicated)
        project = directory / "pyproject.toml"
        if project.is_file():
            table = read_toml(project).get("tool", {}).get("windtunnel")
            if isinstance(table, dict):
                return project, table
            if table is not None:
                raise ConfigFileError(
                    f"{shown(project)}: tool.windtunnel = {toml_value(table)}: must be a table",
                    hint="write a [tool.windtunnel] section with key = value lines",
                    path=str(project),
                    field="tool.windtunnel",
                )
    return None


def _where(path: Path) -> str:
    return f"{shown(path)} [tool.windtunnel]" if path.name == "pyproject.toml" else shown(path)


def load_settings(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read the project's config (nearest windtunnel.toml or pyproject.toml with [tool.windtunnel]) through
    its model: a problem is one ConfigFileError naming the file, the key, the value and the fix."""
    cwd = (cwd or Path.cwd()).resolve()
    env = dict(process_env() if env is None else env)
    found = _find_config(cwd)
    root: Path = cwd
    source: Path | None = None
    project = ProjectModel()
    if found is not None:
        source, table = found
        root = source.parent
        project = validated(ProjectModel, table, source, where=_where(source))
        _check_pack_paths(project.packs, root, source)
    runs_dir = Path(env.get("WT_RUNS_DIR") or project.runs_dir or root / "runs")
    return Settings(
        root=root,
        source=source,
        runtimes=tuple(RuntimeEntry(**entry.model_dump()) for entry in project.runtimes),
        packs=tuple(project.packs),
        requirement_set=project.requirement_set or SUITE_VERSION,
        runs_dir=runs_dir if runs_dir.is_absolute() else root / runs_dir,
        lock_dir=lock_dir(env),
        env=env,
        pricing=parse_pricing(project.pricing, _where(source), source) if source and project.pricing else {},
        ladder=parse_ladder(project.ladder, _where(source), source)
        if source and project.ladder is not None
        else None,
    )


def _check_pack_paths(packs: Sequence[str], root: Path, source: Path) -> None:
    """A `packs` entry written as a path (it has a `/`) must exist when the config is read, not when a verb
    reaches the engine; a bare name (an installed pack) or a `module:attr` is looked up when packs load."""
    for index, ref in enumerate(packs):
        if ":" in ref or not ("/" in ref or ref.startswith(".")):
            continue
        path = Path(ref).expanduser()
        path = path if path.is_absolute() else root / path
        if not path.exists():
            raise ConfigFileError(
                f"{_where(source)}: packs[{index}] = {toml_value(ref)}: there is no pack at {shown(path)}",
                hint="name an existing pack directory relative to the config file, or drop the entry",
                path=str(source),
                field=f"packs[{index}]",
            )


def bundled_root() -> Path | None:
    """The Wind Tunnel checkout this package runs from (its runtimes/, scenarios/, conformance/ and image
    sources), or None for an installed wheel."""
    import windtunnel

    root = Path(windtunnel.__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / WINDTUNNEL_DOCKERFILE).is_file() else None
