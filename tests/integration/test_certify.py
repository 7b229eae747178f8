"""`wt certify` end to end: the bundle, `wt verify`, tampering, a poison in the set, an invalid harness,
report.html opened in headless Chromium, a container left behind, and a runtime certified by image
reference. Real containers throughout.

The bundle the module's tests read comes from one certify (each certify of a runtime takes minutes on two
cores): the reference control, given by name, and an out-of-tree copy of it, named `reference-copy` (two
runtimes of one run cannot share a name), given by its directory, whose runtime.toml names `[driver] kind
= "fake_container"`. That kind comes from a fake package (tests/fixtures/fake_plugin_pkg) registered under
the `windtunnel.drivers` entry-point group: a plugin wrapping the one `windtunnel.spi.container_plugin`
makes, written against the public doors only. So the same run proves that a runtime given by directory is
the runtime by name (docs/writing-a-runtime.md, "How a runtime is found and run") and that a third-party
driver kind is certified with no change to Wind Tunnel's code: Wind Tunnel asks the plugin and the runtime
for abilities, never for the kind's name or class, nor for how the runtime was named."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fake_package import install_fake_package
from tests.pty_run import run_in_pty
from windtunnel._bundle import layout
from windtunnel._bundle.models import CheckRecord, Stage
from windtunnel._bundle.privacy_scan import HostFacts, scan_files, scan_text
from windtunnel._config import load_settings
from windtunnel._conformance import checks_config
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._drivers.container_plugin import build_manifest_image
from windtunnel._engine.cleanup import labelled
from windtunnel._engine.network import CALLER_LABEL, SESSION_LABEL
from windtunnel._engine.stack import GatewaySpec
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.context import StageContext
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.plan import PLAN, Step, execute
from windtunnel._pipeline.publish import publish
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.errors import ConfigFileError

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]


def wt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


COPY = "reference-copy"
KIND = "fake_container"


def out_of_tree_copy(where: Path) -> Path:
    """runtimes/reference copied outside the project (its poison variants left behind), renamed, naming
    the third-party driver kind."""
    target = where / "elsewhere" / "my-runtime"
    shutil.copytree(
        REPO / "runtimes" / "reference", target, ignore=shutil.ignore_patterns("poison", "__pycache__")
    )
    manifest = target / "runtime.toml"
    text = manifest.read_text().replace('name = "reference"', f'name = "{COPY}"', 1)
    manifest.write_text(f'{text}\n[driver]\nkind = "{KIND}"\n')
    return target


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("certify")


@pytest.fixture(scope="module")
def env(docker_client: Any, base_image: str, run_label: str) -> dict[str, str]:
    return {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}


@dataclass(frozen=True)
class Certified:
    bundle: Path
    fingerprint: str
    """The signer fingerprint certify printed (the pinned form its last line shows)."""
    stderr: str


@pytest.fixture(scope="module")
def certified(env: dict[str, str], work: Path) -> Certified:
    copy = out_of_tree_copy(work)
    out = work / "bundle"
    site = install_fake_package(work / "fake_pkg")  # on PYTHONPATH: the package that registers KIND
    # A lock directory of its own: the certify does not queue behind another worker's reference control.
    own = {**env, "PYTHONPATH": str(site), "WT_LOCK_DIR": str(work / "locks")}
    done = wt(own, "certify", "--runtime", str(copy), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "verdict: PASSED" in done.stdout
    (fingerprint,) = re.findall(r"^signer: (SHA256:[0-9a-f]{64})$", done.stdout, re.MULTILINE)
    assert done.stdout.rstrip().splitlines()[-1] == f"verify: wt verify {out} --key-fingerprint {fingerprint}"
    # No terminal: plain progress lines with each stage's time on stderr, the time table on stdout.
    assert "\x1b[" not in done.stdout + done.stderr
    assert re.search(r"^wt certify: reference: conformance took \d", done.stderr, re.MULTILINE), done.stderr
    # A first build on a fresh machine takes minutes: "1m14s".
    assert re.search(r"^reference +[0-9.m]+s +[0-9.ms]+", done.stdout, re.MULTILINE), done.stdout
    return Certified(out, fingerprint, done.stderr)


@pytest.fixture(scope="module")
def bundle(certified: Certified) -> Path:
    return certified.bundle


def test_the_printed_fingerprint_verifies_the_bundle_without_a_warning(
    certified: Certified, env: dict[str, str]
) -> None:
    bundle, fingerprint = certified.bundle, certified.fingerprint
    for target in (bundle, Path(f"{bundle}.tar.gz")):
        done = wt(env, "verify", str(target), "--key-fingerprint", fingerprint)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "came from the bundle itself" not in done.stdout
    own = wt(env, "verify", str(bundle), "--key", str(bundle / "keys" / "signer.pub.pem"))
    assert own.returncode == 0 and "warning: the key came from the bundle itself" in own.stdout


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    stream = tar.extractfile(member)
    assert stream is not None
    return stream.read()


def test_no_bundle_file_names_this_machine(bundle: Path) -> None:
    """Neither the host name, nor the home directory, nor the checkout's absolute path, in any file (the
    archive too); the verifier's privacy check passed above, this is the same fact read independently."""
    facts = HostFacts.here(REPO)
    leaks = [str(finding) for finding in scan_files(bundle, layout.bundle_files(bundle), facts)]
    assert leaks == [], leaks
    statement = json.loads((bundle / layout.ATTESTATION).read_text())["payload"]
    decoded = base64.b64decode(statement).decode()
    assert scan_text(decoded, path="statement", facts=facts) == []
    raw = gzip.decompress(Path(f"{bundle}.tar.gz").read_bytes())
    long_facts = [REPO.resolve().as_posix(), os.environ.get("HOME", "/nonexistent") + "/"]
    assert not [fact for fact in long_facts if fact.encode() in raw], long_facts
    with tarfile.open(f"{bundle}.tar.gz") as tar:
        assert {(m.uname, m.gname, m.uid, m.gid) for m in tar.getmembers()} == {("", "", 0, 0)}
        extracted = {m.name.split("/", 1)[1]: _read(tar, m) for m in tar.getmembers() if m.isfile()}
    assert extracted == {name: (bundle / name).read_bytes() for name in layout.bundle_files(bundle)}
    run = json.loads((bundle / "run.json").read_text())
    assert run["host"]["hostname"] is None and set(run["host"]) == {
        "platform",
        "python",
        "hostname",
        "engine",
        "executor",
    }
    assert all(not str(r["source"] or "").startswith("/") for r in run["runtimes"]), run["runtimes"]


def test_no_bundle_file_holds_an_absolute_path_of_the_copy_home_or_checkout(bundle: Path, work: Path) -> None:
    absolute = [str(work).encode(), str(Path.home()).encode(), str(REPO).encode()]
    found = [
        str(p.relative_to(bundle))
        for p in bundle.rglob("*")
        if p.is_file() and any(needle in p.read_bytes() for needle in absolute)
    ]
    with tarfile.open(f"{bundle}.tar.gz") as archive:
        for member in archive.getmembers():
            data = archive.extractfile(member) if member.isfile() else None
            if data is not None and any(needle in data.read() for needle in absolute):
                found.append(f"archive:{member.name}")
    assert found == [], f"absolute paths in the bundle: {found}"


def outcomes(checks: list[dict[str, Any]], runtime: str) -> dict[str, tuple[str, bool]]:
    """The runtime's own checks (status, scored) by id without the runtime's name. The tapes stage is left
    out: committed tapes are filed under the runtime's name (<pack>/tapes/reference/), so a runtime of
    another name has none to replay, by design."""
    return {
        check["id"].removeprefix(f"{runtime}/"): (check["status"], check["scored"])
        for check in checks
        if check["runtime"] == runtime and check["scope"] == "runtime" and check["stage"] != "tapes"
    }


def test_a_copy_by_directory_gets_the_checks_and_verdict_of_the_runtime_by_name(bundle: Path) -> None:
    verdict = json.loads((bundle / "verdict.json").read_text())
    assert {r["name"]: r["result"] for r in verdict["runtimes"]} == {"reference": "PASSED", COPY: "PASSED"}
    checks = json.loads((bundle / "checks.json").read_text())["checks"]
    by_name, by_directory = outcomes(checks, "reference"), outcomes(checks, COPY)
    assert by_directory == by_name and len(by_name) > 20
    assert by_directory["conformance/unsupported_config"] == ("passed", True)  # its declared config is kept
    run = json.loads((bundle / "run.json").read_text())
    assert {r["name"]: r["source"] for r in run["runtimes"]} == {
        "reference": "runtimes/reference",
        COPY: COPY,
    }


def test_the_third_party_driver_kind_built_it(certified: Certified) -> None:
    assert f"{KIND}: building {COPY}" in certified.stderr  # the kind's own code, not the built-in one


def test_certified_bundle_verifies(bundle: Path, env: dict[str, str]) -> None:
    key = bundle / "keys" / "signer.pub.pem"
    for target in (bundle, Path(f"{bundle}.tar.gz")):
        done = wt(env, "verify", str(target), "--key", str(key))
        assert done.returncode == 0, done.stdout + done.stderr
    verdict = json.loads((bundle / "verdict.json").read_text())
    assert verdict["result"] == "PASSED" and verdict["signing_key"] == "unverified dev key"
    checks = json.loads((bundle / "checks.json").read_text())["checks"]
    stages = {c["stage"] for c in checks}
    assert {"build", "conformance", "canary", "selftest", "tapes", "publish"} <= stages
    assert any(
        c["id"] == "harness/publish/no-container-left-behind" and c["status"] == "passed" for c in checks
    )
    run = json.loads((bundle / "run.json").read_text())
    assert "runtime:reference" in run["images"] and run["images"]["runtime:reference"].startswith("sha256:")
    assert list((bundle / "traces").rglob("*.trace.json"))


@pytest.mark.parametrize("tamper", ["payload", "file-added", "file-removed", "digest", "wrong-key"])
def test_tampered_bundle_is_rejected(bundle: Path, env: dict[str, str], tmp_path: Path, tamper: str) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    key = copy / "keys" / "signer.pub.pem"
    if tamper == "payload":
        path = copy / "attestations" / "certification.intoto.jsonl"
        envelope = json.loads(path.read_text())
        envelope["payload"] = ("A" if envelope["payload"][0] != "A" else "B") + envelope["payload"][1:]
        path.write_text(json.dumps(envelope) + "\n")
    elif tamper == "file-added":
        (copy / "traces" / "extra.json").write_text("{}")
    elif tamper == "file-removed":
        next((copy / "traces").rglob("*.score.json")).unlink()
    elif tamper == "digest":
        (copy / "checks.json").write_text(
            (copy / "checks.json").read_text().replace('"passed"', '"failed"', 1)
        )
    else:
        other = wt(
            env, "verify", str(copy), "--key", str(REPO / "tests" / "fixtures" / "keys" / "other.pub.pem")
        )
        assert other.returncode == 1 and "signature" in other.stdout.lower()
        return
    done = wt(env, "verify", str(copy), "--key", str(key))
    assert done.returncode == 1, done.stdout
    assert "INVALID" in done.stdout


def test_report_opens_in_headless_chromium(bundle: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Debian's chromium for this test")
        pytest.skip("no chromium on this machine")
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            (bundle / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'id="verdict"' in done.stdout and "PASSED" in done.stdout
    assert 'id="runtime-reference"' in done.stdout and "reference/conformance/egress_closed" in done.stdout
    assert 'href="evidence/reference/conformance/egress_closed.json"' in done.stdout


def test_poison_in_the_certify_set_is_failed_and_signed(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "poison"
    # Under a real terminal: rich progress, a line per finished stage with its time, then the verdict.
    argv = [
        sys.executable,
        "-m",
        "windtunnel._cli.main",
        "certify",
        "--runtime",
        "reference-poison-ignore_sampling",
        "--fail-fast",  # the poison's later stages would prove nothing more here
    ]
    code, drawn = run_in_pty([*argv, "--out", str(out)], env=env, cwd=REPO, timeout=1800)
    assert code == 1, drawn[-3000:]
    assert "\x1b[" in drawn and "ETA" in drawn, drawn[-3000:]
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)  # without its colours and cursor moves
    assert re.search(r"✓ reference: build [0-9.ms]+ \(\d+ passed\)", text), text[-3000:]
    assert re.search(r"✗ reference-poison-ignore_sampling: conformance [0-9.ms]+ \(", text), text[-3000:]
    assert "verdict: FAILED" in text
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["result"] == "FAILED"
    poison = next(r for r in verdict["runtimes"] if r["name"] == "reference-poison-ignore_sampling")
    assert poison["result"] == "FAILED"
    assert "reference-poison-ignore_sampling/conformance/sampling" in poison["failed_checks"]
    assert (out / "attestations" / "certification.intoto.jsonl").is_file()
    checks = json.loads((out / "checks.json").read_text())["checks"]
    caught = next(c for c in checks if c["id"].startswith("harness/conformance/poison-caught/"))
    assert caught["status"] == "passed"


def test_a_harness_that_cannot_catch_a_poison_is_invalid_and_unsigned(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("WT_BASE_IMAGE", "WT_SESSION_LABEL"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.setattr(
        checks_config, "sampling", lambda subject: {"blind": True}
    )  # the check no longer bites
    from windtunnel._conformance import kit

    # The sampling check alone, blind: the rest of the kit would only run what the bundle test runs.
    blind = tuple(
        kit.Check(c.id, c.title, c.clause, checks_config.sampling) for c in kit.CHECKS if c.id == "sampling"
    )
    assert len(blind) == 1
    monkeypatch.setattr("windtunnel._pipeline.stages.CHECKS", blind)
    settings = load_settings(REPO)
    config = CertifyConfig.from_settings(
        settings, runtimes=("reference-poison-ignore_sampling",), out_dir=tmp_path / "invalid"
    )
    plan = tuple(step for step in PLAN if step.stage.value in {"build", "conformance"})
    assert all(isinstance(step, Step) for step in plan)
    outcome = execute(plan, config, DockerExecutor())
    published = publish(config, outcome)
    assert published.verdict.result is CertificationResult.HARNESS_INVALID
    assert published.seal is None
    assert not (tmp_path / "invalid" / "attestations").exists()
    failures = " ".join(published.verdict.harness_failures)
    assert "poison-caught/reference-poison-ignore_sampling" in failures


BUILD = next(step for step in PLAN if step.stage is Stage.BUILD)


def test_a_container_left_behind_is_a_failed_check_also_with_a_session_label(
    env: dict[str, str], docker_client: Any, run_label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("WT_BASE_IMAGE", "WT_SESSION_LABEL"):  # WT_SESSION_LABEL takes windtunnel.session
        monkeypatch.setenv(key, env[key])
    leaked: dict[str, Any] = {}

    def leak(ctx: StageContext) -> list[CheckRecord]:
        # A stage that starts a fresh stack for its runtime (as the tapes stage does) and forgets it.
        assert ctx.run.runtime.stack.labels[CALLER_LABEL] == ctx.run_id
        fresh = ctx.run.runtime.with_gateway(GatewaySpec())
        fresh.stack.gateway()
        leaked[ctx.run.name] = fresh.stack
        return [ctx.check("leak", CheckStatus.PASSED, "left a gateway running")]

    config = CertifyConfig.from_settings(load_settings(REPO), runtimes=(), out_dir=tmp_path / "leak")
    outcome = execute((BUILD, Step(Stage.CONFORMANCE, leak)), config, DockerExecutor())
    stack = leaked["reference"]
    assert stack.labels[SESSION_LABEL] == run_label  # the session label is not the run id ...
    left = next(c for c in outcome.harness if c.id == "harness/publish/no-container-left-behind")
    assert left.status is CheckStatus.FAILED, left.detail  # ... and the check still finds the container
    assert f"run={stack.run_id}" in left.detail and "gateway" in left.detail
    containers, networks = labelled(docker_client, CALLER_LABEL, outcome.run_id)
    assert not containers and not networks  # recorded, then removed
    stack.close()  # its admin client (the containers are gone already)
    assert publish(config, outcome).verdict.result is CertificationResult.HARNESS_INVALID


@pytest.fixture(scope="module")
def image_ref(docker_client: Any, base_image: str, run_label: str) -> Iterator[str]:
    """The reference runtime's image under a name of its own, as a prebuilt Contract C image would be."""
    manifest = load_manifest(REPO / "runtimes" / "reference")
    built = build_manifest_image(
        docker_client, manifest, base_image=base_image, cache_dir=None, lock_dir=None
    )
    ref = f"wt-test/reference-by-image:{run_label}"
    docker_client.images.get(built.tag).tag(ref)
    yield ref
    docker_client.images.remove(ref)  # the tag only; the image stays for the other tests


def image_config(tmp_path: Path, ref: str) -> CertifyConfig:
    (tmp_path / "windtunnel.toml").write_text(
        f'packs = ["{REPO / "scenarios" / "support_desk"}"]\n'
        f'runtimes = [{{name = "by-image", image = "{ref}", manifest = "{REPO / "runtimes" / "reference" / "runtime.toml"}"}}]\n'
    )
    return CertifyConfig.from_settings(load_settings(tmp_path), runtimes=(), out_dir=tmp_path / "out")


def test_a_runtime_configured_by_image_reference_is_provisioned_and_checked(
    env: dict[str, str], image_ref: str, docker_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("WT_BASE_IMAGE", "WT_SESSION_LABEL"):
        monkeypatch.setenv(key, env[key])
    from windtunnel._conformance import kit

    subset = tuple(c for c in kit.CHECKS if c.id in {"response_shapes", "intermediate_tool_calls"})
    monkeypatch.setattr(
        "windtunnel._pipeline.stages.CHECKS", subset
    )  # a full conformance run is the bundle test's
    config = image_config(tmp_path, image_ref)
    assert config.runtimes == ("by-image",)
    conformance = next(step for step in PLAN if step.stage is Stage.CONFORMANCE)
    outcome = execute((BUILD, conformance), config, DockerExecutor())
    run = outcome.runs[1]
    assert run.name == "by-image" and run.source == image_ref
    assert run.images["runtime:by-image"] == docker_client.images.get(image_ref).id
    statuses = {c.id: c.status for c in run.checks}
    assert statuses == {
        "by-image/build/images": CheckStatus.PASSED,
        "by-image/build/ready": CheckStatus.PASSED,
        "by-image/conformance/response_shapes": CheckStatus.PASSED,
        "by-image/conformance/intermediate_tool_calls": CheckStatus.PASSED,
        # the fence's record of what the runtime tried to reach: unscored, present for every runtime
        "by-image/publish/reach": CheckStatus.INFO,
    }, [c.detail for c in run.checks]
    left = next(c for c in outcome.harness if c.id == "harness/publish/no-container-left-behind")
    assert left.status is CheckStatus.PASSED, left.detail


def test_an_image_that_is_absent_and_cannot_be_pulled_stops_the_run_saying_how_to_load_it(
    env: dict[str, str], docker_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_SESSION_LABEL", env["WT_SESSION_LABEL"])
    absent = "127.0.0.1:9/wt-absent/runtime:none"  # a registry on loopback that is not there: no traffic out
    config = image_config(tmp_path, absent)
    with pytest.raises(ConfigFileError, match="is not in the Docker engine, and pulling it failed") as caught:
        execute((BUILD,), config, DockerExecutor())
    assert "docker load -i" in str(caught.value) and absent in str(caught.value)
    assert not (tmp_path / "out" / "evidence").exists()  # stopped before any stage
