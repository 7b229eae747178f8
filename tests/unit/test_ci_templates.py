"""The CI gate (docs/ci.md): the GitHub composite Action, its example workflow and the GitLab template are
schema-valid (check-jsonschema's vendored schemastore schemas, offline), and the shell they run is run
here, step by step with each platform's rules: the pinned-key guard, the install, `wt certify` without an
engine (the job fails, the bundle upload still runs), and `wt verify` against genuine signed bundles."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.pipeline_steps import Executor, build, config, step
from tests.unit.report_bundle import make_bundle, signer
from windtunnel._bundle import Signer
from windtunnel._bundle.models import Stage
from windtunnel._pipeline.plan import execute
from windtunnel._pipeline.publish import publish

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / ".github" / "actions" / "certify" / "action.yml"
MERGE_ACTION = REPO / ".github" / "actions" / "merge" / "action.yml"
GITLAB = REPO / "ci" / "windtunnel.gitlab-ci.yml"
TEMPLATES = {
    ACTION: "vendor.github-actions",
    MERGE_ACTION: "vendor.github-actions",
    REPO / "ci" / "github-workflow.example.yml": "vendor.github-workflows",
    REPO / "ci" / "github-workflow-sharded.example.yml": "vendor.github-workflows",
    GITLAB: "vendor.gitlab-ci",
    REPO / "ci" / "gitlab-ci.example.yml": "vendor.gitlab-ci",
    REPO / "ci" / "gitlab-ci-sharded.example.yml": "vendor.gitlab-ci",
}
NO_ENGINE = "unix:///nonexistent/docker.sock"
"""Where the tests point DOCKER_HOST: no engine answers, and no traffic leaves the machine."""
BIN = Path(sys.executable).parent
"""The `wt` and `python` the steps find on PATH: this checkout's."""


def check_jsonschema(path: Path, schema: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("path", "schema"), TEMPLATES.items(), ids=[str(p.relative_to(REPO)) for p in TEMPLATES]
)
def test_each_template_is_valid_against_its_platforms_schema(path: Path, schema: str) -> None:
    done = check_jsonschema(path, schema)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_bites(tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"  # composite run steps must name their shell
    broken.write_text(re.sub(r"\n\s+shell: bash", "", ACTION.read_text()))
    assert check_jsonschema(broken, "vendor.github-actions").returncode == 1
    visible = GITLAB.read_text().replace(
        ".windtunnel-certify:", "windtunnel-certify:"
    )  # hidden jobs are free-form
    broken.write_text(visible)
    assert check_jsonschema(broken, "vendor.gitlab-ci").returncode == 0
    broken.write_text(visible.replace("when: always", "when: sometimes"))
    assert check_jsonschema(broken, "vendor.gitlab-ci").returncode == 1


def sandbox_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WT_", "DOCKER_", "GITHUB_"))}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env['PATH']}", "DOCKER_HOST": NO_ENGINE, **extra}


# The install step runs for real but changes nothing: pip prepares the project it names, then stops (its
# own options, as environment variables). No build isolation: an isolated build's own pip would inherit the
# dry run and install no setuptools. (pip reads PIP_NO_BUILD_ISOLATION=false as --no-build-isolation.)
PIP_DRY_RUN = {"PIP_DRY_RUN": "1", "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "false"}


@dataclass
class Job:
    """A composite action's steps run the way GitHub runs them: `${{ }}` expressions of inputs, the action
    path and earlier steps' outputs; a failed step skips the rest unless `if: always()`."""

    workspace: Path
    inputs: dict[str, str]
    env: dict[str, str]
    ran: list[str] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    failed: int | None = None
    log: str = ""
    action: Path = ACTION

    def run(self, only: set[str] | None = None) -> Job:
        action = yaml.safe_load(self.action.read_text())
        defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        self.inputs = {**defaults, **self.inputs}
        for spec in action["runs"]["steps"]:
            name = spec.get("name") or spec.get("uses")
            if (only is not None and name not in only) or (
                self.failed is not None and spec.get("if") != "always()"
            ):
                continue
            self.ran.append(name)
            if "run" in spec:
                self._shell(spec)
        return self

    def _shell(self, spec: dict[str, Any]) -> None:
        outputs = self.workspace / f".output-{len(self.ran)}"
        outputs.write_text("")
        env = {k: self._expand(str(v)) for k, v in (spec.get("env") or {}).items()}
        where = self.workspace / self._expand(spec.get("working-directory", "."))
        done = subprocess.run(
            ["bash", "-e", "-c", spec["run"]],
            cwd=where,
            env={**self.env, **env, "GITHUB_OUTPUT": str(outputs)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        self.log += done.stdout + done.stderr
        lines = [line.partition("=") for line in outputs.read_text().splitlines()]
        self.outputs[spec.get("id", "")] = {k: v for k, _, v in lines}
        if done.returncode != 0:
            self.failed = done.returncode

    def _expand(self, text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1).strip()
            if expression.startswith("inputs."):
                return self.inputs[expression.removeprefix("inputs.")]
            if expression == "github.action_path":
                return str(self.action.parent)
            if expression.startswith("steps."):
                step_id, _, output = expression.removeprefix("steps.").partition(".outputs.")
                return self.outputs.get(step_id, {}).get(output, "")
            raise AssertionError(f"the test runner does not know the expression {expression!r}")

        return re.sub(r"\$\{\{(.+?)\}\}", value, text)


UPLOAD = "upload the bundle, its report and JUnit"


def pinned_key(tmp_path: Path, key: Signer) -> Path:
    path = tmp_path / ".github" / "windtunnel-signer.pub.pem"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(key.public_pem)
    return path


def test_a_key_inside_the_bundle_directory_is_refused_before_anything_runs(tmp_path: Path) -> None:
    job = Job(tmp_path, {"public-key": "out/bundle/keys/signer.pub.pem"}, sandbox_env())
    (tmp_path / "out" / "bundle" / "keys").mkdir(parents=True)
    (tmp_path / "out" / "bundle" / "keys" / "signer.pub.pem").write_bytes(signer().public_pem)
    job.run()
    assert job.failed == 2 and "is inside the bundle directory" in job.log
    assert job.ran == ["actions/setup-python@v5", "refuse a key the bundle brings along", UPLOAD]
    missing = Job(tmp_path, {"public-key": "nowhere.pem"}, sandbox_env()).run()
    assert missing.failed == 2 and "public-key nowhere.pem is not a file" in missing.log


def test_without_an_engine_certify_fails_the_job_and_the_bundle_is_still_uploaded(tmp_path: Path) -> None:
    pinned_key(tmp_path, signer())
    job = Job(tmp_path, {"public-key": ".github/windtunnel-signer.pub.pem"}, sandbox_env(**PIP_DRY_RUN)).run()
    assert job.ran == [
        "actions/setup-python@v5",
        "refuse a key the bundle brings along",
        "install Wind Tunnel",  # the checkout this action comes from, resolved and built by pip
        "certify",
        UPLOAD,
    ], job.log
    assert job.failed == 2 and "EngineUnavailableError" in job.log and job.outputs["certify"] == {}


def genuine_bundle(tmp_path: Path, key: Signer, *, passed: bool) -> Path:
    """A real signed bundle at tmp_path/out/bundle: PASSED from passing steps, else the FAILED one."""
    if not passed:
        made, _ = make_bundle(tmp_path / "failed", key)
        shutil.copytree(made, tmp_path / "out" / "bundle")
        shutil.copy(f"{made}.tar.gz", tmp_path / "out" / "bundle.tar.gz")
        return tmp_path / "out" / "bundle"
    settings = config(tmp_path / "passed")
    outcome = execute((build(), step(Stage.CONFORMANCE)), settings, Executor())
    published = publish(settings, outcome, signer=key)
    assert published.seal is not None
    shutil.copytree(settings.out_dir, tmp_path / "out" / "bundle")
    shutil.copy(published.seal.archive, tmp_path / "out" / "bundle.tar.gz")
    return tmp_path / "out" / "bundle"


@pytest.mark.parametrize(
    ("passed", "trusted", "failed"), [(True, True, None), (False, True, 1), (True, False, 1)],
    ids=["passed-and-pinned", "failed-verdict", "other-signer"],
)  # fmt: skip
def test_verify_passes_only_a_passed_bundle_signed_by_the_pinned_key(
    tmp_path: Path, passed: bool, trusted: bool, failed: int | None
) -> None:
    key = signer()
    genuine_bundle(tmp_path, key, passed=passed)
    pinned_key(tmp_path, key if trusted else signer())
    job = Job(tmp_path, {"public-key": ".github/windtunnel-signer.pub.pem"}, sandbox_env())
    job.run(only={"refuse a key the bundle brings along", "verify against the pinned key"})
    assert job.failed == failed, job.log
    assert ("VALID" in job.log) if trusted else ("INVALID" in job.log)


def gitlab_template(job: str) -> dict[str, Any]:
    """A hidden job of the template with its `extends` applied (GitLab merges hashes, replaces the rest)."""
    jobs = yaml.safe_load(GITLAB.read_text())
    template = dict(jobs[job])
    parent = gitlab_template(template.pop("extends")) if "extends" in template else {}
    merged = {**parent, **template}
    merged["variables"] = {**parent.get("variables", {}), **template.get("variables", {})}
    return merged


def gitlab_job(workspace: Path, job: str = ".windtunnel-certify", **variables: str) -> tuple[int, str]:
    """The template's script lines in order under bash, as GitLab runs them: the first failure ends the job."""
    template = gitlab_template(job)
    if job != ".windtunnel-merge":  # the certify jobs run against their own docker:dind; merging needs none
        assert (
            template["services"][0]["name"] == "docker:dind"
            and template["variables"]["DOCKER_HOST"] == "tcp://docker:2375"
        )
    env = sandbox_env(**{**{k: str(v) for k, v in template["variables"].items()}, **variables})
    env["DOCKER_HOST"] = NO_ENGINE  # never the dind alias from here
    log = ""
    for line in template["script"]:
        done = subprocess.run(
            ["bash", "-e", "-c", line],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        log += done.stdout + done.stderr
        if done.returncode != 0:
            return done.returncode, log
    return 0, log


def test_the_gitlab_template_refuses_a_missing_or_bundled_key(tmp_path: Path) -> None:
    code, log = gitlab_job(tmp_path)
    assert code == 2 and "WT_PUBLIC_KEY () is not a file" in log
    (tmp_path / "out" / "bundle").mkdir(parents=True)
    (tmp_path / "out" / "bundle" / "k.pem").write_bytes(signer().public_pem)
    code, log = gitlab_job(tmp_path, WT_PUBLIC_KEY="out/bundle/k.pem")
    assert code == 2 and "inside the bundle directory" in log


def test_the_gitlab_template_installs_then_fails_without_an_engine(tmp_path: Path) -> None:
    pinned_key(tmp_path, signer())
    code, log = gitlab_job(
        tmp_path, WT_PUBLIC_KEY=".github/windtunnel-signer.pub.pem", WT_INSTALL=str(REPO), **PIP_DRY_RUN
    )
    assert code == 2 and "EngineUnavailableError" in log


def test_the_gitlab_templates_verify_line_accepts_a_passed_bundle_signed_by_the_pinned_key(
    tmp_path: Path,
) -> None:
    key = signer()
    genuine_bundle(tmp_path, key, passed=True)
    pinned_key(tmp_path, key)
    verify = next(
        line
        for line in yaml.safe_load(GITLAB.read_text())[".windtunnel-certify"]["script"]
        if line.startswith("wt verify")
    )
    env = sandbox_env(WT_PUBLIC_KEY=".github/windtunnel-signer.pub.pem")
    done = subprocess.run(
        ["bash", "-e", "-c", verify],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "verdict: PASSED" in done.stdout, done.stdout + done.stderr


# -- sharded certification: a matrix of certify jobs, one merge job that gates ---------------------------
def shard_archives(workspace: Path, pem: bytes, count: int, under: str) -> list[Path]:
    """Synthetic shards 1..count (the real plan split, publish and seal) signed with `pem`, as archives in
    workspace/under; the gate pins that key."""
    from tests.unit.shard_bundles import make_shards, provided_signer

    key = provided_signer(pem)
    pinned_key(workspace, key)
    (workspace / under).mkdir(parents=True, exist_ok=True)
    archives = []
    for index, shard in enumerate(make_shards(workspace / ".made", count, key), start=1):
        archive = workspace / under / f"shard-{index}-{count}.tar.gz"
        shutil.copy(f"{shard}.tar.gz", archive)
        archives.append(archive)
    return archives


MERGE_STEPS = {"refuse a key the bundle brings along", "merge", "verify against the pinned key"}
PINNED = ".github/windtunnel-signer.pub.pem"


def merge_job(workspace: Path, pem: bytes) -> Job:
    inputs = {"public-key": PINNED, "shards": "shards/*.tar.gz", "signing-key": pem.decode()}
    return Job(workspace, inputs, sandbox_env(), action=MERGE_ACTION).run(only=MERGE_STEPS)


def test_the_merge_action_merges_the_shards_and_gates_on_the_merged_verdict(tmp_path: Path) -> None:
    from tests.unit.shard_bundles import private_key_pem

    pem = private_key_pem()
    shard_archives(tmp_path, pem, 2, "shards")
    job = merge_job(tmp_path, pem)
    assert job.failed is None, job.log
    assert job.outputs["merge"] == {"verdict": "PASSED"} and "verdict: PASSED" in job.log


def test_the_merge_action_fails_on_a_missing_shard(tmp_path: Path) -> None:
    from tests.unit.shard_bundles import private_key_pem

    pem = private_key_pem()
    shard_archives(tmp_path, pem, 2, "shards")[1].unlink()
    job = merge_job(tmp_path, pem)
    assert job.failed == 1 and "shard 2/2 of plan" in job.log and "is missing" in job.log
    assert job.outputs["merge"] == {}


def test_the_certify_action_passes_its_shard_to_wt_certify(tmp_path: Path) -> None:
    pinned_key(tmp_path, signer())
    job = Job(tmp_path, {"public-key": PINNED, "shard": "3/2"}, sandbox_env()).run(only={"certify"})
    assert job.failed == 2 and "--shard '3/2' is not a shard of a plan" in job.log


def test_the_gitlab_shard_job_needs_its_shard_and_passes_it(tmp_path: Path) -> None:
    pinned_key(tmp_path, signer())
    code, log = gitlab_job(tmp_path, ".windtunnel-certify-shard", WT_PUBLIC_KEY=PINNED)
    assert code == 2 and "WT_SHARD is empty" in log
    code, log = gitlab_job(
        tmp_path,
        ".windtunnel-certify-shard",
        WT_PUBLIC_KEY=PINNED,
        WT_SHARD="0/3",
        WT_INSTALL=str(REPO),
        **PIP_DRY_RUN,
    )
    assert code == 2 and "--shard '0/3' is not a shard of a plan" in log


def test_the_gitlab_merge_job_merges_the_matrix_shards_and_gates(tmp_path: Path) -> None:
    from tests.unit.shard_bundles import private_key_pem

    pem = private_key_pem()
    shard_archives(tmp_path, pem, 2, "out")
    variables = {
        "WT_PUBLIC_KEY": PINNED,
        "WT_INSTALL": str(REPO),
        "WT_SIGNING_KEY": pem.decode(),
        **PIP_DRY_RUN,
    }
    code, log = gitlab_job(tmp_path, ".windtunnel-merge", **variables)
    assert code == 0 and "verdict: PASSED" in log, log
    (tmp_path / "out" / "shard-2-2.tar.gz").unlink()
    code, log = gitlab_job(tmp_path, ".windtunnel-merge", **variables)
    assert code == 1 and "shard 2/2 of plan" in log


def test_the_sharded_examples_split_the_same_plan_they_merge() -> None:
    github = yaml.safe_load((REPO / "ci" / "github-workflow-sharded.example.yml").read_text())
    matrix = github["jobs"]["certify"]["strategy"]["matrix"]["shard"]
    (certify,) = [s for s in github["jobs"]["certify"]["steps"] if "certify@" in s.get("uses", "")]
    assert certify["with"]["shard"] == "${{ matrix.shard }}/" + str(len(matrix))
    assert github["jobs"]["gate"]["needs"] == "certify"
    gitlab = yaml.safe_load((REPO / "ci" / "gitlab-ci-sharded.example.yml").read_text())
    (shards,) = gitlab["wind-tunnel-shard"]["parallel"]["matrix"]
    count = len(shards["WT_SHARD"])
    assert shards["WT_SHARD"] == [f"{i}/{count}" for i in range(1, count + 1)]
    assert gitlab["wind-tunnel"]["needs"] == ["wind-tunnel-shard"]
