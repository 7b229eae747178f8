"""Files into and out of real containers through the engine's API (windtunnel._engine.files): a pack's
directory goes in before start, what the container writes comes out after, no bind mount anywhere."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._engine.base_image import DEFAULT_BASE_IMAGE, ensure_base_image
from windtunnel._engine.docker_env import docker_client
from windtunnel._engine.files import archive_of, copy_out, empty_directories, put

pytestmark = pytest.mark.docker

WRITER = "import pathlib; pathlib.Path('/out/made.txt').write_text(open('/in/pack/a/b.txt').read() + '!')"


@pytest.fixture
def client() -> Iterator[Any]:
    engine = docker_client()
    yield engine
    engine.close()


def test_a_directory_goes_in_and_what_the_container_writes_comes_out(client: Any, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    (pack / "a").mkdir(parents=True)
    (pack / "a" / "b.txt").write_text("hello")
    (pack / "__pycache__").mkdir()
    (pack / "__pycache__" / "x.pyc").write_bytes(b"\0")
    image = ensure_base_image(client, DEFAULT_BASE_IMAGE)
    container = client.containers.create(
        image,
        ["python3", "-c", WRITER],
        name=f"wt-files-test-{uuid.uuid4().hex[:6]}",
        labels={"windtunnel.session": "files-test"},
    )
    try:
        put(container, archive_of({"/in/pack": pack}), "the pack")
        put(container, empty_directories(["/out"]), "the output directory")
        assert not container.attrs["HostConfig"].get("Binds")  # nothing of the host is mounted
        container.start()
        assert container.wait(timeout=60)["StatusCode"] == 0, container.logs()
        written = copy_out(container, "/out", tmp_path / "copied")
        assert written == [tmp_path / "copied" / "made.txt"]
        assert written[0].read_text() == "hello!"
        listing = copy_out(container, "/in/pack", tmp_path / "pack-back")
        assert [p.relative_to(tmp_path / "pack-back").as_posix() for p in listing] == ["a/b.txt"]
    finally:
        container.remove(force=True)
