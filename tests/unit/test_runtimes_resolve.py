"""The one runtime resolver (windtunnel._runtimes.resolve) over every kind of reference: an entry point, a
runtimes/**/runtime.toml name, a directory, a runtime.toml file, a config entry, module:attr, an image, an
unknown name, and a name clash. Real files: the repository's runtimes, copies of them in tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from windtunnel._config import load_settings
from windtunnel._conformance.subject import Subject
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._runtimes.resolve import Found, display_path, is_image_ref, resolve_runtime, resolve_runtimes
from windtunnel.errors import ConfigFileError, PluginError, UnknownRuntimeError, UsageError

REPO = Path(__file__).resolve().parents[2]
POISON = "reference-poison-ignore_sampling"
POISON_DIR = REPO / "runtimes" / "reference" / "poison" / "ignore_sampling"
SETTINGS = load_settings(REPO, env={})


def copy_of_reference(where: Path, name: str | None = None) -> Path:
    """An out-of-tree copy of the bundled reference runtime (its own directory only: no poison variants)."""
    target = where / "my-runtime"
    shutil.copytree(
        REPO / "runtimes" / "reference", target, ignore=shutil.ignore_patterns("poison", "__pycache__")
    )
    if name is not None:
        manifest = target / "runtime.toml"
        manifest.write_text(manifest.read_text().replace('name = "reference"', f'name = "{name}"'))
    return target


def test_an_entry_point_name() -> None:
    described = resolve_runtime("in_memory", SETTINGS)
    assert (described.name, described.found, described.source) == (
        "in_memory",
        Found.ENTRY_POINT,
        "in_memory",
    )
    assert described.origin == "entry point in_memory = windtunnel._drivers.in_memory:plugin"
    assert described.manifest is None and described.driver is None


def test_a_runtime_toml_name_keeps_its_manifest_and_shows_a_relative_path() -> None:
    described = resolve_runtime(POISON, SETTINGS)
    assert described.found is Found.MANIFEST and described.driver == "container"
    assert described.source == "runtimes/reference/poison/ignore_sampling"
    assert (
        isinstance(described.plugin, ContainerRuntimePlugin)
        and described.plugin.manifest == described.manifest
    )
    assert described.manifest is not None and "sampling.temperature" in described.manifest.supported


@pytest.mark.parametrize(
    "given", [str(POISON_DIR), str(POISON_DIR / "runtime.toml"), "runtimes/reference/poison/ignore_sampling"]
)
def test_a_directory_or_its_runtime_toml_is_the_same_runtime_as_its_name(
    given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    by_dir, by_name = resolve_runtime(given, SETTINGS), resolve_runtime(POISON, SETTINGS)
    assert by_dir.found is Found.DIRECTORY and by_dir.name == POISON
    assert by_dir.manifest == by_name.manifest  # all it declares
    assert by_dir.source == by_name.source and by_dir.identity == by_name.identity
    (both,) = resolve_runtimes([POISON, given], SETTINGS)  # one runtime, not a clash
    assert both.found is Found.MANIFEST and both.identity == by_name.identity


def test_a_directory_outside_the_project_shows_as_its_name_never_an_absolute_path(tmp_path: Path) -> None:
    copy = copy_of_reference(tmp_path, name="my-reference")
    described = resolve_runtime(str(copy), SETTINGS)
    assert described.name == "my-reference" and described.source == "my-reference"
    assert str(tmp_path) not in described.origin and str(Path.home()) not in described.origin
    assert described.manifest is not None and described.manifest.reference  # its abilities are kept
    reference = resolve_runtime("reference", SETTINGS).manifest
    assert reference is not None and described.manifest.supported == reference.supported


def test_display_path() -> None:
    assert display_path(REPO / "runtimes" / "reference", REPO, "reference") == "runtimes/reference"
    assert display_path(Path("/somewhere/else"), REPO, "reference") == "reference"


def test_a_python_driver_directory_is_its_plugin() -> None:
    described = resolve_runtime(str(REPO / "runtimes" / "reference" / "poison" / "teardown_raises"), SETTINGS)
    assert described.driver == "python" and type(described.plugin).__name__ == "WrappingPlugin"
    assert described.manifest is not None and described.manifest.plugin == "driver:plugin"


def test_a_module_attr_path() -> None:
    described = resolve_runtime("windtunnel._drivers.in_memory:plugin", SETTINGS)
    assert described.found is Found.ATTR and described.name == "windtunnel._drivers.in_memory:plugin"
    with pytest.raises(PluginError, match="cannot be loaded"):
        resolve_runtime("windtunnel._drivers.in_memory:no_such_plugin", SETTINGS)


def test_an_image_reference_is_plain_contract_c() -> None:
    described = resolve_runtime("registry.local:5000/acme/agent:1.2", SETTINGS)
    assert (described.name, described.found, described.source) == (
        "agent",
        Found.IMAGE,
        "registry.local:5000/acme/agent:1.2",
    )
    assert (
        described.manifest is not None
        and described.manifest.image_ref == "registry.local:5000/acme/agent:1.2"
    )
    assert described.manifest.supported == frozenset() and not described.manifest.reference
    assert is_image_ref("python:3.12-slim") and is_image_ref("agent@sha256:" + "0" * 64)
    assert not is_image_ref("reference") and not is_image_ref("registry.local/agent")  # no tag: not an image


def test_config_entries_resolve_in_every_verb(tmp_path: Path) -> None:
    (tmp_path / "windtunnel.toml").write_text(
        f'runtimes = [{{name = "mine", build = "{REPO / "runtimes" / "reference"}"}}, '
        '{name = "theirs", image = "registry.local/agent:1"}]\n'
    )
    settings = load_settings(tmp_path, env={})
    mine, theirs = resolve_runtime("mine", settings), resolve_runtime("theirs", settings)
    assert (mine.found, mine.name, mine.source) == (Found.CONFIG, "mine", "mine")
    assert mine.manifest is not None and mine.manifest.reference and mine.manifest.name == "mine"
    assert (theirs.found, theirs.name, theirs.source) == (Found.CONFIG, "theirs", "registry.local/agent:1")


def test_an_unknown_name_lists_what_is_known() -> None:
    with pytest.raises(UnknownRuntimeError) as caught:
        resolve_runtime("no-such-runtime", SETTINGS)
    text = str(caught.value)
    assert (
        "no runtime named 'no-such-runtime'" in text and "registered runtimes: http_inject, in_memory" in text
    )
    assert "runtime.toml names: claude-agent-sdk, codex, langgraph, minimal, minimal-accepting, " in text
    assert "more)" in text
    assert "how to fix" in text and len(caught.value.message.splitlines()) == 1


def test_a_path_that_is_not_there_is_named() -> None:
    with pytest.raises(ConfigFileError, match=r"there is no runtime directory or runtime\.toml"):
        resolve_runtime("./no/such/runtime", SETTINGS)
    with pytest.raises(ConfigFileError, match=r"no runtime\.toml"):
        resolve_runtime(str(REPO / "scenarios"), SETTINGS)  # a directory, but not a runtime's


def test_two_runtimes_with_one_name_are_a_usage_error_naming_both(tmp_path: Path) -> None:
    copy = copy_of_reference(tmp_path)  # its runtime.toml still says name = "reference"
    with pytest.raises(UsageError, match="two different runtimes are named 'reference'") as caught:
        resolve_runtimes(["reference", str(copy)], SETTINGS)
    text = str(caught.value)
    assert (
        str(REPO / "runtimes" / "reference" / "runtime.toml") in text and str(copy / "runtime.toml") in text
    )
    assert "known-good control" in text and 'name = "..."' in text


def test_a_subject_holds_what_its_runtime_toml_declares_and_the_defaults_without_one() -> None:
    declared = resolve_runtime("claude-agent-sdk", SETTINGS)
    assert declared.manifest is not None
    subject = Subject.of(declared, runtime=object(), name="claude")  # type: ignore[arg-type]
    assert (subject.wire, subject.faults, subject.mcp) == (
        "messages",
        declared.manifest.faults,
        declared.manifest.mcp,
    )
    assert subject.supported == declared.manifest.supported and subject.manifest == declared.manifest_shown
    bare = Subject.of(resolve_runtime("in_memory", SETTINGS), runtime=object(), name="bare")  # type: ignore[arg-type]
    assert (bare.wire, bare.supported, bare.manifest, dict(bare.unsupported)) == ("chat", None, None, {})
