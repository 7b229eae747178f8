"""`wt merge` on synthetic shards (the real plan split, publish and seal, no containers): the merged bundle
verifies, its verdict equals a single run's, and every refusal names the shard and the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.unit.pipeline_steps import OTHER, fails_for
from tests.unit.shard_bundles import UNITS, certify, make_shards, plan_config, provided_signer, steps
from windtunnel._bundle import Signer, seal_bundle, verify_bundle
from windtunnel._bundle.canonical import sha256_hex
from windtunnel._bundle.dsse import envelope_from_json
from windtunnel._bundle.errors import BundleSealError
from windtunnel._bundle.layout import ATTESTATION
from windtunnel._bundle.models import ChecksFile, Verdict
from windtunnel._core.vocabulary import CertificationResult, CheckStatus
from windtunnel._pipeline.merge_shards import merge_shards
from windtunnel._report.page import render_bundle_report
from windtunnel.errors import UsageError, VerificationError


@pytest.fixture(scope="module")
def signer() -> Signer:
    return provided_signer()


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, signer: Signer) -> list[Path]:
    """Shards 1/2 and 2/2 of the plan (in_memory, reference), made once for the module."""
    return make_shards(tmp_path_factory.mktemp("plan"), 2, signer)


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory, shards: list[Path], signer: Signer) -> Path:
    out = tmp_path_factory.mktemp("merged") / "out"
    merge_shards(shards, out=out, signer=signer, trusted=[signer.public_pem])
    return out


def refusal(paths: list[Path], out: Path, signer: Signer, trusted: list[bytes] | None = None) -> str:
    with pytest.raises(VerificationError) as caught:
        merge_shards(paths, out=out, signer=signer, trusted=trusted or [signer.public_pem])
    assert caught.value.context["check"] == "merge.shard"
    return caught.value.message


def statuses(checks: ChecksFile) -> dict[str, CheckStatus]:
    return {check.id: check.status for check in checks.checks}


def test_the_merged_bundle_verifies_and_passes(merged: Path, signer: Signer) -> None:
    report = verify_bundle(merged, signer.public_pem)
    assert report.valid, report.reason
    assert report.result is CertificationResult.PASSED
    archive = verify_bundle(merged.with_name("out.tar.gz"), signer.public_pem)
    assert archive.valid, archive.reason


def test_the_merged_verdict_equals_a_single_run_of_the_same_plan(
    merged: Path, tmp_path: Path, signer: Signer
) -> None:
    single = certify(plan_config(tmp_path), tmp_path / "single", signer)
    checks = ChecksFile.model_validate_json((merged / "checks.json").read_text())
    single_checks = ChecksFile.model_validate_json((tmp_path / "single" / "checks.json").read_text())
    assert statuses(checks) == statuses(single_checks)
    verdict = Verdict.model_validate_json((merged / "verdict.json").read_text())
    assert verdict == single.verdict


def test_a_three_way_split_with_an_empty_part_merges_to_the_single_runs_verdict(tmp_path: Path) -> None:
    signer = provided_signer()
    paths = make_shards(tmp_path, 3, signer)  # two units: the third part is empty (the control only)
    published = merge_shards(paths, out=tmp_path / "merged", signer=signer, trusted=[signer.public_pem])
    single = certify(plan_config(tmp_path), tmp_path / "single", signer)
    checks = ChecksFile.model_validate_json((tmp_path / "merged" / "checks.json").read_text())
    single_checks = ChecksFile.model_validate_json((tmp_path / "single" / "checks.json").read_text())
    assert statuses(checks) == statuses(single_checks)
    assert published.verdict == single.verdict
    assert verify_bundle(tmp_path / "merged", signer.public_pem).valid


def test_a_failing_runtime_fails_the_merged_verdict_as_it_fails_a_single_run(tmp_path: Path) -> None:
    signer = provided_signer()
    plan = steps(fails_for(OTHER))
    paths = make_shards(tmp_path, 2, signer, plan=plan)
    published = merge_shards(paths, out=tmp_path / "merged", signer=signer, trusted=[signer.public_pem])
    single = certify(plan_config(tmp_path), tmp_path / "single", signer, plan)
    assert published.verdict.result is CertificationResult.FAILED
    assert published.verdict == single.verdict
    assert verify_bundle(tmp_path / "merged", signer.public_pem).valid


def test_each_shard_is_kept_whole_under_its_prefix_and_cited_there(merged: Path, shards: list[Path]) -> None:
    for index, shard in enumerate(shards, start=1):
        for path in shard.rglob("*"):
            if path.is_file():
                copy = merged / "shards" / str(index) / path.relative_to(shard)
                assert copy.read_bytes() == path.read_bytes()
    checks = ChecksFile.model_validate_json((merged / "checks.json").read_text())
    cited = [path for check in checks.checks for path in check.evidence]
    assert cited and all(path.startswith(("shards/1/", "shards/2/")) for path in cited)
    control = next(c for c in checks.checks if c.id == "harness/selftest/reference-control")
    assert control.status is CheckStatus.PASSED  # run by both shards: one check


def test_the_merged_statement_signs_each_shards_statement_digest(merged: Path, shards: list[Path]) -> None:
    envelope = envelope_from_json((merged / ATTESTATION).read_text(), source="merged")
    statement = json.loads(envelope.payload)
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    for index, shard in enumerate(shards, start=1):
        payload = envelope_from_json((shard / ATTESTATION).read_text(), source="shard").payload
        assert subjects[f"statement:shards/{index}"] == sha256_hex(payload)
        assert json.loads(payload)["predicate"]["shard"]["index"] == index
    merge = json.loads((merged / "merge.json").read_text())
    assert statement["predicate"]["merge"] == {"plan_digest": merge["plan_digest"], "count": 2}


def test_the_report_renders_the_merged_bundle_as_one(merged: Path) -> None:
    page = render_bundle_report(merged)
    assert f"{OTHER}/conformance/surface" in page and "reference/conformance/surface" in page
    assert "shards/1/evidence/" in page and "shards/2/evidence/" in page
    assert "merged from 2 shards of plan" in page and 'href="shards/2/report.html"' in page
    assert "Shard 1 of 2 of plan" in render_bundle_report(merged / "shards" / "1")


# -- refusals -------------------------------------------------------------------------------------------
def test_only_one_shard_is_refused_naming_the_missing_one(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    message = refusal(shards[:1], tmp_path / "out", signer)
    assert "shard 2/2 of plan" in message and "is missing" in message


def test_the_same_shard_twice_is_refused_as_a_duplicate(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    message = refusal([shards[0], shards[0]], tmp_path / "out", signer)
    assert f"{shards[0]} and {shards[0]} are each shard 1/2" in message
    assert "shard 2/2 of plan" in message


def test_a_shard_with_an_edited_checks_json_is_refused(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    edited = tmp_path / "edited"
    shutil.copytree(shards[1], edited)
    text = (edited / "checks.json").read_text()
    (edited / "checks.json").write_text(
        text.replace('"failed"', '"passed"').replace("surface passed", "surface PASSED")
    )
    message = refusal([shards[0], edited], tmp_path / "out", signer)
    assert message.startswith(f"{edited} is invalid: subjects.digest: checks.json has sha256")


def test_a_shard_signed_by_an_untrusted_key_is_refused(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    other = provided_signer()
    message = refusal(shards, tmp_path / "out", signer, trusted=[other.public_pem])
    assert f"{shards[0]} is not signed by a trusted key" in message


def test_a_key_found_inside_a_shard_is_never_trusted(shards: list[Path], tmp_path: Path) -> None:
    merger = provided_signer()  # trusts only its own key: the shards' keys/signer.pub.pem count for nothing
    message = refusal(shards, tmp_path / "out", merger)
    assert "is not signed by a trusted key" in message


def test_a_foreign_shard_is_refused(shards: list[Path], tmp_path: Path, signer: Signer) -> None:
    foreign = make_shards(tmp_path / "other", 2, signer, runtimes=(OTHER,))
    message = refusal([shards[0], shards[1], foreign[0]], tmp_path / "out", signer)
    assert f"{foreign[0]} is foreign: it is shard 1/2 of plan" in message


def test_a_shard_of_another_split_is_refused_as_extra(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    third = make_shards(tmp_path / "three", 3, signer)[2]
    message = refusal([*shards, third], tmp_path / "out", signer)
    assert f"{third} is extra: it is shard 3/3, of a 3-way split" in message


def test_a_bundle_that_is_no_shard_is_refused(shards: list[Path], tmp_path: Path, signer: Signer) -> None:
    plain = tmp_path / "plain"
    certify(plan_config(tmp_path, UNITS), plain, signer)
    message = refusal([shards[0], plain], tmp_path / "out", signer)
    assert (
        message == f"{plain} is not a shard: it has no shard.json (certify it with `wt certify --shard I/N`)"
    )


def test_a_path_that_is_no_bundle_is_a_usage_error_before_out_is_touched(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.tar.gz").write_bytes(b"not gzip")
    for path in (tmp_path / "nowhere", tmp_path / "empty"):
        with pytest.raises(UsageError):
            merge_shards([shards[0], path], out=tmp_path / "out", signer=signer, trusted=[signer.public_pem])
        assert not (tmp_path / "out").exists()
    with pytest.raises(UsageError, match="is not a bundle archive"):
        merge_shards(
            [tmp_path / "junk.tar.gz"], out=tmp_path / "out", signer=signer, trusted=[signer.public_pem]
        )
    with pytest.raises(UsageError, match="would overwrite the shard"):
        merge_shards(shards, out=shards[0], signer=signer, trusted=[signer.public_pem])


def test_the_archives_merge_like_the_directories(shards: list[Path], tmp_path: Path, signer: Signer) -> None:
    archives = [shard.with_name(shard.name + ".tar.gz") for shard in shards]
    published = merge_shards(archives, out=tmp_path / "out", signer=signer, trusted=[signer.public_pem])
    assert published.verdict.result is CertificationResult.PASSED


# -- verify of a merged bundle --------------------------------------------------------------------------
def test_a_merged_bundle_whose_checks_differ_from_its_shards_does_not_seal(
    merged: Path, tmp_path: Path, signer: Signer
) -> None:
    forged = tmp_path / "forged"
    shutil.copytree(merged, forged)
    checks = ChecksFile.model_validate_json((forged / "checks.json").read_text())
    dropped = ChecksFile(requirement_set=checks.requirement_set, checks=checks.checks[1:])
    (forged / "checks.json").write_text(dropped.model_dump_json())
    from windtunnel._bundle import junit_for

    (forged / "junit.xml").write_text(junit_for(dropped))
    verdict = Verdict.from_checks(dropped, signing_key=signer.origin)
    (forged / "verdict.json").write_text(verdict.model_dump_json())
    with pytest.raises(BundleSealError, match=r"is not what the shards' checks merge into"):
        seal_bundle(forged, signer=signer, archive=tmp_path / "forged.tar.gz")


def test_a_shard_swapped_inside_a_merged_bundle_is_caught(
    merged: Path, shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    swapped = tmp_path / "swapped"
    shutil.copytree(merged, swapped)
    (swapped / "shards" / "1" / "shard.json").write_text((shards[1] / "shard.json").read_text())
    with pytest.raises(BundleSealError, match=r"shards/1 differs from its signed statement at shard\.json"):
        seal_bundle(swapped, signer=signer, archive=tmp_path / "swapped.tar.gz")


def test_a_file_edited_inside_a_shard_of_a_merged_bundle_is_caught(merged: Path, signer: Signer) -> None:
    evidence = next((merged / "shards" / "2" / "evidence").rglob("*.json"))
    original = evidence.read_bytes()
    try:
        evidence.write_bytes(original.replace(b"passed", b"failed"))
        report = verify_bundle(merged, signer.public_pem)
        assert (report.valid, report.check) == (False, "agreement.shards")
        assert (
            f"shard shards/2 differs from its signed statement at {evidence.relative_to(merged / 'shards' / '2')}"
            in (report.reason or "")
        )
    finally:
        evidence.write_bytes(original)
    assert verify_bundle(merged, signer.public_pem).valid


def test_a_stray_file_in_shards_is_caught(merged: Path, signer: Signer) -> None:
    stray = merged / "shards" / "3" / "extra.json"
    stray.parent.mkdir()
    try:
        stray.write_text("{}")
        report = verify_bundle(merged, signer.public_pem)
        assert (report.valid, report.check) == (False, "agreement.shards")
        assert "shards/3/extra.json lies in shards/ but in none of the shards" in (report.reason or "")
    finally:
        shutil.rmtree(stray.parent)


def test_the_merged_statement_names_shards_not_their_files(merged: Path) -> None:
    """The subjects stay under cosign's 1024 whatever the number of shards: a shard is one subject."""
    statement = json.loads(envelope_from_json((merged / ATTESTATION).read_text(), source="m").payload)
    names = [subject["name"] for subject in statement["subject"]]
    assert not [name for name in names if name.startswith("shards/")]
    assert [name for name in names if name.startswith("statement:")] == [
        "statement:shards/1",
        "statement:shards/2",
    ]


def test_a_merged_bundle_is_replaced_by_the_next_merge_into_the_same_out(
    shards: list[Path], tmp_path: Path, signer: Signer
) -> None:
    out = tmp_path / "out"
    merge_shards(shards, out=out, signer=signer, trusted=[signer.public_pem])
    again = merge_shards(shards, out=out, signer=signer, trusted=[signer.public_pem])
    assert again.verdict.result is CertificationResult.PASSED and verify_bundle(out, signer.public_pem).valid
    (out / "shards" / "1" / "mine.txt").write_text("not Wind Tunnel's")
    with pytest.raises(UsageError, match=r"also shards/1/mine\.txt, which that bundle does not list"):
        merge_shards(shards, out=out, signer=signer, trusted=[signer.public_pem])
