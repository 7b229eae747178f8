"""Content hashes of image builds: stable for the same inputs, different when anything consumed changes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from windtunnel._engine.images import context_hash, find_by_content_hash, stage_context
from windtunnel.errors import HarnessError


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    context = tmp_path / "runtime"
    (context / "agent").mkdir(parents=True)
    (context / "agent" / "main.py").write_text("print('hi')\n")
    (context / "Dockerfile").write_text("FROM ${BASE_IMAGE}\nCOPY wheels/ /wheels/\n")
    wheels = tmp_path / "wheelhouse"
    wheels.mkdir()
    (wheels / "demo-1.0-py3-none-any.whl").write_bytes(b"wheel bytes")
    (wheels / "requirements.txt").write_text("demo\n")
    (wheels / "wheelhouse.json").write_text('{"created": "now"}')
    return {"context": context, "wheels": wheels}


def _hash(inputs: dict[str, Path], **overrides: object) -> str:
    arguments: dict[str, object] = {
        "context_dir": inputs["context"],
        "dockerfile": inputs["context"] / "Dockerfile",
        "wheel_dirs": {"wheels": inputs["wheels"]},
        "base_image_id": "sha256:base",
        "build_args": {"BASE_IMAGE": "windtunnel/base:bookworm-py3"},
        "labels": {"windtunnel.image": "runtime:demo"},
    }
    arguments.update(overrides)
    return context_hash(**arguments)  # type: ignore[arg-type]


def test_same_inputs_same_hash(inputs: dict[str, Path]) -> None:
    assert _hash(inputs) == _hash(inputs)


@pytest.mark.parametrize(
    "change",
    [
        lambda i: (i["context"] / "agent" / "main.py").write_text("print('bye')\n"),
        lambda i: (i["context"] / "agent" / "new.py").write_text(""),
        lambda i: (i["context"] / "Dockerfile").write_text("FROM ${BASE_IMAGE}\n"),
        lambda i: (i["wheels"] / "demo-1.0-py3-none-any.whl").write_bytes(b"other bytes"),
        lambda i: (i["wheels"] / "extra-2.0-py3-none-any.whl").write_bytes(b""),
        lambda i: (i["wheels"] / "requirements.txt").write_text("demo\nextra\n"),
    ],
    ids=["source-edit", "source-added", "dockerfile", "wheel-bytes", "wheel-added", "requirements"],
)
def test_any_consumed_file_changes_the_hash(inputs: dict[str, Path], change: object) -> None:
    before = _hash(inputs)
    change(inputs)  # type: ignore[operator]
    assert _hash(inputs) != before


def test_base_image_args_and_labels_change_the_hash(inputs: dict[str, Path]) -> None:
    reference = _hash(inputs)
    assert _hash(inputs, base_image_id="sha256:other") != reference
    assert _hash(inputs, build_args={"BASE_IMAGE": "python:3.12-slim"}) != reference
    assert _hash(inputs, labels={"windtunnel.image": "runtime:other"}) != reference


def test_caches_and_wheelhouse_marker_do_not_change_the_hash(inputs: dict[str, Path]) -> None:
    before = _hash(inputs)
    (inputs["context"] / "agent" / "__pycache__").mkdir()
    (inputs["context"] / "agent" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    (inputs["context"] / ".venv").mkdir()
    (inputs["context"] / ".venv" / "pyvenv.cfg").write_text("home = /x\n")
    (inputs["wheels"] / "wheelhouse.json").write_text('{"created": "later"}')
    assert _hash(inputs) == before


def test_context_hash_does_not_depend_on_where_the_files_live(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    moved = {"context": tmp_path / "elsewhere" / "runtime", "wheels": tmp_path / "elsewhere" / "wheels"}
    shutil.copytree(inputs["context"], moved["context"])
    shutil.copytree(inputs["wheels"], moved["wheels"])
    assert _hash(moved) == _hash(inputs)


def test_stage_context_lays_out_files_dockerfile_and_wheels(inputs: dict[str, Path], tmp_path: Path) -> None:
    stale = inputs["context"] / "wheels"
    stale.mkdir()
    (stale / "stale-0.1-py3-none-any.whl").write_bytes(b"old")
    staged = tmp_path / "staged"
    stage_context(
        staged,
        context_dir=inputs["context"],
        dockerfile=inputs["context"] / "Dockerfile",
        wheel_dirs={"wheels": inputs["wheels"]},
    )
    files = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    assert files == [
        "Dockerfile",
        "agent/main.py",
        "wheels/demo-1.0-py3-none-any.whl",
        "wheels/requirements.txt",
    ]


def test_missing_dockerfile_is_a_harness_error_naming_it(inputs: dict[str, Path]) -> None:
    missing = inputs["context"] / "Nope.Dockerfile"
    with pytest.raises(HarnessError, match=r"Nope\.Dockerfile"):
        _hash(inputs, dockerfile=missing)


def test_of_twin_images_every_caller_settles_on_the_oldest() -> None:
    # The engine trims trailing zeros from the fraction: ".5Z" is later than ".123456789Z".
    stamps = {"sha256:b": "2026-12-04T10:00:00.5Z", "sha256:a": "2026-12-04T10:00:00.123456789Z"}
    twins = [SimpleNamespace(id=image_id, attrs={"Created": stamp}) for image_id, stamp in stamps.items()]
    client = SimpleNamespace(images=SimpleNamespace(list=lambda filters: list(twins)))
    assert find_by_content_hash(client, "abc").id == "sha256:a"  # type: ignore[union-attr]
    twins.reverse()
    assert find_by_content_hash(client, "abc").id == "sha256:a"  # type: ignore[union-attr]
    client.images.list = lambda filters: []
    assert find_by_content_hash(client, "abc") is None
