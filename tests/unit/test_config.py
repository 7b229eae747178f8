"""Config loading (windtunnel._config): windtunnel.toml or [tool.windtunnel], which one wins, env over
file, runtime entries, and errors that name the file, the key and the fix. Real files in tmp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._config import KNOWN_KEYS, SUITE_VERSION, RuntimeEntry, load_settings
from windtunnel.errors import ConfigFileError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config_anywhere_gives_defaults_rooted_at_the_cwd(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, env={})
    if settings.source is not None:  # a config above tmp (never expected on CI machines) is not ours
        pytest.skip(f"a config above the temp dir: {settings.source}")
    assert settings.root == tmp_path.resolve()
    assert (
        settings.runtimes == () and settings.packs == () and settings.requirement_set == SUITE_VERSION == "5"
    )
    assert settings.runs_dir == tmp_path.resolve() / "runs"


def test_tool_windtunnel_in_pyproject_is_read(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n[tool.windtunnel]\nruntimes = ["reference", {name = "mine", build = "rt"}]\n'
        'packs = ["scenarios/a"]\nrequirement_set = 2\nruns_dir = "out/runs"\n',
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "scenarios" / "a").mkdir(parents=True)  # a pack path must exist when the config is read
    settings = load_settings(tmp_path / "sub", env={})  # found from a subdirectory too
    assert settings.source == tmp_path.resolve() / "pyproject.toml"
    assert settings.root == tmp_path.resolve()
    assert settings.runtimes == (RuntimeEntry(name="reference"), RuntimeEntry(name="mine", build="rt"))
    assert settings.packs == ("scenarios/a",)
    assert settings.requirement_set == "2"
    assert settings.runs_dir == tmp_path.resolve() / "out" / "runs"


def test_windtunnel_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.windtunnel]\npacks = ["from-pyproject"]\n')
    write(tmp_path / "windtunnel.toml", 'packs = ["from-windtunnel-toml"]\n')
    settings = load_settings(tmp_path, env={})
    assert settings.source == tmp_path.resolve() / "windtunnel.toml"
    assert settings.packs == ("from-windtunnel-toml",)


def test_the_nearest_directory_wins_and_a_pyproject_without_the_table_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "windtunnel.toml", 'packs = ["outer"]\n')
    write(tmp_path / "inner" / "pyproject.toml", '[project]\nname = "inner"\n')  # no [tool.windtunnel]
    deeper = tmp_path / "inner" / "deeper"
    write(deeper / "pyproject.toml", '[tool.windtunnel]\npacks = ["deeper"]\n')
    assert load_settings(tmp_path / "inner", env={}).packs == ("outer",)
    assert load_settings(deeper, env={}).packs == ("deeper",)


def test_env_wins_over_the_file_for_runs_dir(tmp_path: Path) -> None:
    write(tmp_path / "windtunnel.toml", 'runs_dir = "from-file"\n')
    assert load_settings(tmp_path, env={}).runs_dir == tmp_path.resolve() / "from-file"
    from_env = load_settings(tmp_path, env={"WT_RUNS_DIR": str(tmp_path / "from-env")})
    assert from_env.runs_dir == tmp_path / "from-env"


def test_an_unknown_key_is_an_error_naming_it_and_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", '[tool.windtunnel]\npakcs = ["scenarios/a"]\n')
    with pytest.raises(ConfigFileError) as caught:
        load_settings(tmp_path, env={})
    message = str(caught.value)
    assert "'pakcs'" in message and str(path.resolve()) in message and "[tool.windtunnel]" in message
    assert all(key in message for key in KNOWN_KEYS)
    assert caught.value.field == "pakcs"  # type: ignore[attr-defined]


def test_an_unknown_key_in_windtunnel_toml_names_that_file(tmp_path: Path) -> None:
    write(tmp_path / "windtunnel.toml", 'runtimes = ["reference"]\nrequirements = "1"\n')
    with pytest.raises(ConfigFileError) as caught:
        load_settings(tmp_path, env={})
    message = str(caught.value)
    assert (
        "windtunnel.toml: unknown key 'requirements'; did you mean 'requirement_set'? known keys" in message
    )
    assert caught.value.hint == "rename it to 'requirement_set'"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('{name = "x", build = "a", image = "b:1"}', "has both build= and image="),
        ('{name = "x", buld = "a"}', "unknown key 'buld'"),
        ('{build = "a"}', "runtimes[0].name is missing"),
        ('{name = "x", image = 3}', "runtimes[0].image = 3: must be an image reference"),
        ("3", "runtimes[0] = 3: must be"),
        ('{name = "x", build = "a", manifest = "m.toml"}', "manifest= describes an image="),
        ('"x", "x"', "names 'x' more than once"),
    ],
)
def test_bad_runtime_entries_are_errors(tmp_path: Path, entry: str, problem: str) -> None:
    write(tmp_path / "windtunnel.toml", f"runtimes = [{entry}]\n")
    with pytest.raises(ConfigFileError) as caught:
        load_settings(tmp_path, env={})
    assert problem in str(caught.value) and "how to fix" in str(caught.value)


def test_image_entries_keep_their_manifest(tmp_path: Path) -> None:
    write(
        tmp_path / "windtunnel.toml",
        'runtimes = [{name = "theirs", image = "registry.local/agent:1", manifest = "rt/runtime.toml"}]\n',
    )
    (entry,) = load_settings(tmp_path, env={}).runtimes
    assert entry == RuntimeEntry(name="theirs", image="registry.local/agent:1", manifest="rt/runtime.toml")


@pytest.mark.parametrize("text", ['packs = "scenarios/a"\n', "requirement_set = [1]\n", "runtimes = 3\n"])
def test_wrong_types_are_errors(tmp_path: Path, text: str) -> None:
    write(tmp_path / "windtunnel.toml", text)
    with pytest.raises(ConfigFileError, match="must be"):
        load_settings(tmp_path, env={})


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "windtunnel.toml", "runtimes = [\n")
    with pytest.raises(ConfigFileError, match="is not valid TOML") as caught:
        load_settings(tmp_path, env={})
    assert str(path.resolve()) in str(caught.value)
