"""`wt certify --stack bound` end to end: the container plan's services started up front in Docker, as the
Dagger module starts them, then the whole stage plan against them through the bound driver.

Nothing is mocked: the images are the ones `wt certify` builds, every service runs the command, env and
alias of the plan, and this process plays the Dagger runner (it reaches the services by IP where the
runner container uses their runner aliases).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._config import load_settings
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._drivers.bound import BoundStack, load_bound_stacks
from windtunnel._drivers.container_plan_model import ContainerPlan
from windtunnel._drivers.images import BuiltImage
from windtunnel._drivers.plugin import build_manifest_image
from windtunnel._pipeline.bound_executor import BoundExecutor
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.container_plan import container_plan
from windtunnel._pipeline.plan import PLAN, execute
from windtunnel._pipeline.publish import publish
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.testing import PlannedContainer, ProjectNetwork

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _config(out_dir: Path) -> CertifyConfig:
    return CertifyConfig.from_settings(load_settings(cwd=REPO), runtimes=("reference",), out_dir=out_dir)


@pytest.fixture(scope="module")
def started(
    docker_client: Any,
    base_image: str,
    windtunnel_image: BuiltImage,
    run_label: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ContainerPlan, dict[str, BoundStack], dict[str, str]]]:
    plan = container_plan(_config(tmp_path_factory.mktemp("plan")), base_image=base_image)
    manifest = load_manifest(REPO / "runtimes" / "reference")
    runtime_image = build_manifest_image(docker_client, manifest, base_image=base_image)
    tags = {"windtunnel": windtunnel_image.tag, "runtime:reference": runtime_image.tag}
    digests = {"windtunnel": windtunnel_image.digest, "runtime:reference": runtime_image.digest}
    (planned,) = plan.stacks
    network = ProjectNetwork(docker_client, session=run_label).create()
    try:
        running = {  # each service as the plan says, started through windtunnel.testing's one container path
            service.runner_alias: PlannedContainer(service, tags[service.image], network, root=REPO).start()
            for service in planned.services
        }
        text = json.dumps(plan.bound_document({"reference": digests}))
        for alias, container in running.items():  # this process is the runner: names resolve to IPs here
            text = text.replace(f"http://{alias}:", f"http://{container.ip}:")
        yield plan, load_bound_stacks(text), digests
    finally:
        network.remove()


def test_the_stage_plan_runs_on_the_bound_services(
    started: tuple[ContainerPlan, dict[str, BoundStack], dict[str, str]], tmp_path: Path
) -> None:
    plan, stacks, digests = started
    config = dataclasses.replace(_config(tmp_path / "bundle"), stack="bound", bound=stacks)
    outcome = execute(PLAN, config, BoundExecutor())
    (run,) = outcome.runs
    assert run.images == digests
    assert list(dict.fromkeys(check.stage.value for check in run.checks)) == list(plan.stages[:-1])
    not_passed = {c.id: c.status for c in run.checks if c.scored and c.status is not CheckStatus.PASSED}
    # Everything the Docker executor measures passes, but a bound runtime cannot be killed, cannot host an
    # egress probe and cannot get a replay gateway per tape: those are NOT_MEASURED, which requirement set
    # v1 does not count as passed.
    tapes = {c.id: CheckStatus.NOT_MEASURED for c in run.checks if c.id.startswith("reference/tapes/")}
    assert tapes
    assert not_passed == {
        "reference/conformance/recovery": CheckStatus.NOT_MEASURED,
        "reference/conformance/egress_closed": CheckStatus.NOT_MEASURED,
        **tapes,
    }, [c.detail for c in run.checks if c.id in not_passed]
    selftest = [c for c in run.checks if c.id.startswith("reference/selftest/")]
    assert selftest and all(c.status is CheckStatus.PASSED for c in selftest)
    # The executor declares what it cannot measure: the reference control is not blamed for it (the harness
    # works), but no runtime is certified on a check that was not measured: FAILED, signed.
    control = next(c for c in outcome.harness if c.id == "harness/selftest/reference-control")
    assert control.status is CheckStatus.PASSED and "this executor cannot measure" in control.detail
    published = publish(config, outcome)
    assert published.verdict.result is CertificationResult.FAILED and published.seal is not None
    assert published.verdict.harness_failures == []
    assert set(published.verdict.runtimes[0].failed_checks) == set(not_passed)
