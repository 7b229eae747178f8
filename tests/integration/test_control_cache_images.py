"""The reference control's cache against real images: rebuilding an image with one file changed gives it
a new digest, and the control cached under the old one is not reused (windtunnel._pipeline.control_cache)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import docker
import pytest

from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._engine.images import build_image
from windtunnel._packs.loader import load_pack
from windtunnel._packs.selection import Selected
from windtunnel._pipeline import control_cache

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "tests" / "fixtures" / "prove_packs" / "shop"
DOCKERFILE = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY marker.txt /marker.txt\n"


def key_for(digest: str) -> str:
    pack = load_pack(str(SHOP))
    found = control_cache.control_key(
        images={"runtime:reference": digest},
        selected=[Selected(pack, pack.scenario("charge_basket"))],
        suite_dir=REPO / "conformance",
        requirement_set="3",
        tiers=(),
        certification=True,
    )
    assert found is not None
    return found


@pytest.mark.docker
def test_a_rebuilt_image_with_a_changed_file_misses_the_cached_control(
    docker_client: docker.DockerClient, base_image: str, session_labels: dict[str, str], tmp_path: Path
) -> None:
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text(DOCKERFILE)
    tag = f"windtunnel-test/control-cache:{uuid.uuid4().hex[:10]}"
    built = []
    try:
        for marker in ("one", "two"):
            (context / "marker.txt").write_text(marker)
            built.append(
                build_image(
                    docker_client,
                    context_dir=context,
                    dockerfile=context / "Dockerfile",
                    tag=tag,
                    base_image=base_image,
                    wheelhouse_dir=None,
                    labels=session_labels,
                )
            )
            if marker == "one":
                record = CheckRecord(
                    id="reference/selftest/shop/charge_basket/golden",
                    runtime="reference",
                    stage=Stage.SELFTEST,
                    status=CheckStatus.PASSED,
                )
                control_cache.store(
                    tmp_path / "cache", key_for(built[0].digest), "certify-1", datetime.now(UTC), [record]
                )
        first, second = built
        assert first.digest != second.digest and not second.reused
        assert control_cache.load(tmp_path / "cache", key_for(first.digest)) is not None  # unchanged: a hit
        assert control_cache.load(tmp_path / "cache", key_for(second.digest)) is None  # changed: a miss
    finally:
        for image in built:
            docker_client.images.remove(image.id, force=True)
