"""CertifyConfig.from_settings and the runtimes it resolves (windtunnel._pipeline.config, through the one
resolver): CLI over config, the embedded default from any directory, the suite, build=/image= entries
through the container driver's own manifest and plugin. Real files: the repository's runtimes and suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._config import SUITE_VERSION, bundled_root, load_settings
from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._pipeline.config import REFERENCE, CertifyConfig, suite_dir
from windtunnel._runtimes.resolve import Found
from windtunnel.errors import ConfigFileError, UnknownRuntimeError

REPO = Path(__file__).resolve().parents[2]
REFERENCE_DIR = REPO / "runtimes" / "reference"


def config_in(directory: Path, text: str | None = None, runtimes: tuple[str, ...] = ()) -> CertifyConfig:
    if text is not None:
        (directory / "windtunnel.toml").write_text(text, encoding="utf-8")
    settings = load_settings(directory, env={})
    return CertifyConfig.from_settings(settings, runtimes=runtimes, out_dir=directory / "out")


def test_the_checkout_is_the_bundled_root() -> None:
    assert bundled_root() == REPO


def test_an_empty_directory_gets_the_embedded_default(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    assert config.runtimes == (REFERENCE,)
    assert config.root == REPO  # the bundled packs and suite of the checkout, from anywhere
    assert config.suite_dir == REPO / "conformance"
    assert config.pack_refs == load_settings(REPO, env={}).packs and config.pack_refs
    assert config.out_dir == tmp_path / "out"


def test_cli_runtimes_win_over_configured_ones(tmp_path: Path) -> None:
    text = 'runtimes = ["in_memory", "http_inject"]\n'
    assert config_in(tmp_path, text).runtimes == ("in_memory", "http_inject")
    chosen = config_in(tmp_path, text, runtimes=("reference-poison-reset_noop",))
    assert chosen.runtimes == ("reference-poison-reset_noop",)
    assert chosen.all_runtimes == (REFERENCE, "reference-poison-reset_noop")
    assert [d.name for d in chosen.descriptions()] == [REFERENCE, "reference-poison-reset_noop"]


def test_a_project_without_a_suite_uses_the_bundled_one_and_its_own_when_it_has_one(tmp_path: Path) -> None:
    assert config_in(tmp_path, "packs = []\n").suite_dir == REPO / "conformance"
    own = tmp_path / "conformance" / "requirements"
    own.mkdir(parents=True)
    (own / f"v{SUITE_VERSION}.toml").write_text(
        f'version = "{SUITE_VERSION}"\nscored = []\n', encoding="utf-8"
    )
    assert config_in(tmp_path, "packs = []\n").suite_dir == tmp_path.resolve() / "conformance"


def test_a_requirement_set_nobody_has_is_an_error_naming_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="no conformance suite with requirement set 99") as caught:
        suite_dir(tmp_path, "99")
    assert str(tmp_path / "conformance" / "requirements" / "v99.toml") in str(caught.value)


def test_a_build_entry_is_its_directorys_manifest_under_the_entry_name(tmp_path: Path) -> None:
    config = config_in(tmp_path, f'runtimes = [{{name = "mine", build = "{REFERENCE_DIR}"}}]\n')
    assert config.runtimes == ("mine",)
    described = config.description_of("mine")
    manifest = described.manifest
    assert manifest is not None and manifest.name == "mine" and described.found is Found.CONFIG
    assert manifest.build_dir == REFERENCE_DIR and manifest.image_ref is None and manifest.reference
    assert isinstance(described.plugin, ContainerRuntimePlugin) and described.plugin.manifest is manifest
    assert "build directory" in described.origin
    assert described.source == "mine"  # outside the project root: its name, never an absolute path


def test_a_build_entry_relative_to_the_config_file(tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir()
    (runtime / "runtime.toml").write_text('name = "x"\n[image]\nbuild = "."\n', encoding="utf-8")
    (runtime / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "windtunnel.toml").write_text('runtimes = [{name = "y", build = "rt"}]\n', encoding="utf-8")
    config = CertifyConfig.from_settings(
        load_settings(tmp_path / "sub", env={}), runtimes=(), out_dir=tmp_path
    )
    manifest = config.description_of("y").manifest
    assert manifest is not None and manifest.build_dir == runtime.resolve() and manifest.name == "y"
    assert config.description_of("y").source == "rt"  # relative to the project root


def test_a_build_entry_without_a_runtime_toml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigFileError, match=r"no runtime\.toml"):
        config_in(tmp_path, 'runtimes = [{name = "y", build = "empty"}]\n')


def test_an_image_entry_is_a_plain_contract_c_manifest(tmp_path: Path) -> None:
    config = config_in(tmp_path, 'runtimes = [{name = "theirs", image = "registry.local/agent:1"}]\n')
    described = config.description_of("theirs")
    manifest = described.manifest
    assert manifest is not None and manifest.image_ref == "registry.local/agent:1"
    assert manifest.build_dir is None and not manifest.reference and manifest.supported == frozenset()
    assert manifest.env_rename == {} and manifest.port == 8647
    assert isinstance(described.plugin, ContainerRuntimePlugin)
    assert "image registry.local/agent:1" in described.origin and described.source == "registry.local/agent:1"


def test_an_image_entry_with_a_manifest_takes_its_abilities_not_its_build(tmp_path: Path) -> None:
    text = f'runtimes = [{{name = "ref-image", image = "wt/ref:x", manifest = "{REFERENCE_DIR}/runtime.toml"}}]\n'
    manifest = config_in(tmp_path, text).description_of("ref-image").manifest
    assert manifest is not None and manifest.name == "ref-image" and manifest.image_ref == "wt/ref:x"
    assert manifest.build_dir is None and manifest.reference and manifest.state_route == "/wt/state"
    assert "sampling.temperature" in manifest.supported


def test_the_reference_control_cannot_be_replaced_by_a_config_entry(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="known-good control"):
        config_in(tmp_path, 'runtimes = [{name = "reference", image = "mine:1"}]\n')


def test_plain_names_resolve_as_everywhere(tmp_path: Path) -> None:
    config = config_in(tmp_path, 'runtimes = ["reference"]\n')
    reference = config.description_of(REFERENCE).manifest
    assert reference is not None and reference.directory == REFERENCE_DIR
    with pytest.raises(UnknownRuntimeError, match="no runtime named 'no-such-runtime'"):
        config_in(tmp_path, runtimes=("no-such-runtime",))  # resolved up front: nothing starts
