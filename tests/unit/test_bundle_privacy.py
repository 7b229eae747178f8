"""The privacy scan (windtunnel._bundle.privacy_scan) and Portable paths (windtunnel._pipeline.portable):
a bundle naming its host's home, user, host name or project path is refused by seal and by verify; a path
inside a container is not a host path; the pipeline writes host paths relative."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_bundle_samples import NOW, write_sample
from windtunnel._bundle import BundleSealError, KeyOrigin, Signer, seal_bundle, verify_bundle
from windtunnel._bundle.privacy_scan import HostFacts, scan_text
from windtunnel._pipeline.portable import Portable

FACTS = HostFacts(home="/home/alice", user="alice", hostname="buildbox-7", project_root="/srv/work/proj")


def kinds(text: str, facts: HostFacts = FACTS) -> list[str]:
    return [finding.kind for finding in scan_text(text, path="f.json", facts=facts)]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('"trace": "/home/alice/proj/runs/x.json"', "this machine's home directory"),
        ("cd /home/alice", "this machine's home directory"),
        ('"source": "/srv/work/proj/runtimes/reference"', "the project's absolute path"),
        ("ran at alice@buildbox-7", "this machine's user name"),
        ("built on buildbox-7.", "this machine's host name"),
        ('"host": "buildbox-7"', "this machine's host name"),
        ("see /home/bob/.cache/x", "an absolute home-directory path"),
        ("see /Users/carol/src", "an absolute home-directory path"),
        ("see /root/.config/wt", "an absolute home-directory path"),
        ("a path C:/x/alice/y", "this machine's user name"),
        (r"a Windows path C:\\Users\\alice\\x", "this machine's user name"),
        (r'a JSON-escaped "C:\\\\x\\\\alice\\\\y"', "this machine's user name"),
    ],
)
def test_each_host_fact_is_found(text: str, kind: str) -> None:
    assert kind in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "/app/agent.py line 3",  # container paths are not host paths
        "/opt/venv/bin/python",
        "/wt/tapes/support_desk.jsonl",
        "/srv/work/project/x",  # another directory that merely starts like the project root
        "/home/alicesmith2",  # not a directory under /home/<x>/
        "buildbox-70 and xbuildbox-7 and buildbox-7x",  # the host name only as a whole word
        "Alice asked for a refund",  # a user name as an ordinary word is not an account
        "mail alice@example.com",  # nor is an e-mail address at another host
        "localhost:8000",
        r'"{\"agent_name\":\"/alice\",\"turn\":1}"',  # a JSON-escaped string "/alice": no separator after
    ],
)
def test_what_is_not_a_host_fact(text: str) -> None:
    assert kinds(text) == []


def test_this_machine_facts_are_read_and_generic_ones_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/root")
    facts = HostFacts.here(Path("/"))
    assert facts.home is None and facts.project_root is None  # too shallow: the generic /root/ rule covers it
    assert facts.hostname is None or facts.hostname != "localhost"


def test_seal_refuses_a_bundle_that_names_its_host(tmp_path: Path) -> None:
    root = write_sample(tmp_path / "b", origin=KeyOrigin.DEV)
    (root / "traces" / "leak.json").write_text(json.dumps({"where": "/home/alice/proj/out"}))
    with pytest.raises(BundleSealError, match=r"privacy|names the machine it ran on") as caught:
        seal_bundle(root, signer=Signer.ephemeral(), now=NOW, host=FACTS)
    assert "traces/leak.json line 1: this machine's home directory" in str(caught.value)
    assert "/home/alice" not in str(caught.value)  # the finding names the kind, never the value


def test_verify_rejects_a_signed_bundle_that_names_the_verifying_host(tmp_path: Path) -> None:
    root = write_sample(tmp_path / "b", origin=KeyOrigin.DEV)
    (root / "traces" / "host.txt").write_text("made on buildbox-7\n")
    signer = Signer.ephemeral()
    seal_bundle(root, signer=signer, now=NOW, host=HostFacts())  # sealed where buildbox-7 means nothing
    for path in (root, root.with_name("b.tar.gz")):
        report = verify_bundle(path, signer.public_pem, now=NOW, host=FACTS)
        assert not report.valid and report.check == "privacy"
        assert report.reason == (
            "a bundle file names the machine it ran on: traces/host.txt line 1: this machine's host name"
        )
    assert verify_bundle(root, signer.public_pem, now=NOW, host=HostFacts()).valid


def test_base64_and_hex_files_are_not_scanned_for_short_names(tmp_path: Path) -> None:
    root = write_sample(tmp_path / "b", origin=KeyOrigin.DEV)
    signer = Signer.ephemeral()
    seal_bundle(root, signer=signer, now=NOW, host=HostFacts())
    attestation = (root / "attestations" / "certification.intoto.jsonl").read_text()
    chance = HostFacts(hostname=attestation.split('"payload":"')[1][10:12])  # two letters of the base64
    assert verify_bundle(root, signer.public_pem, now=NOW, host=chance).valid


def test_portable_paths_are_bundle_or_project_relative_and_home_is_tilde() -> None:
    paths = Portable(root=Path("/srv/work/proj"), bundle=Path("/srv/work/proj/out"), home="/home/alice")
    assert paths.text("/srv/work/proj/out/traces/a.json") == "traces/a.json"
    assert (
        paths.text("build directory /srv/work/proj/runtimes/x (here)") == "build directory runtimes/x (here)"
    )
    assert paths.text("/srv/work/proj") == "." and paths.text("/srv/work/proj/out") == "."
    assert paths.text("/home/alice/.cache/wt/lock") == "~/.cache/wt/lock"
    assert paths.text("/srv/work/project/x and /app/x") == "/srv/work/project/x and /app/x"
    value = {"file": "/srv/work/proj/scenarios/s/tapes/t.jsonl", "n": 3, "list": ["/home/alice"]}
    assert paths.json(value) == {"file": "scenarios/s/tapes/t.jsonl", "n": 3, "list": ["~"]}


def test_other_home_directories_become_tilde_names() -> None:
    paths = Portable(root=Path("/srv/p"), bundle=Path("/srv/p/out"), home="/home/runner")
    assert paths.text("/home/runner/work/x") == "~/work/x"
    assert (
        paths.text("File /home/app/.local/lib/x.py, and /Users/bob/src")
        == "File ~app/.local/lib/x.py, and ~bob/src"
    )
    assert paths.text("/root/.cache/pip") == "~root/.cache/pip"
    assert paths.text("/opt/venv/bin/python /app/agent.py") == "/opt/venv/bin/python /app/agent.py"


def test_publish_makes_every_stage_file_portable_before_it_seals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage's evidence and a trace that quote host paths (this project's, a home directory's, as a
    runtime's log lines would): the published bundle names none of them, and it seals and verifies."""
    from tests.unit.pipeline_steps import Executor, build, config
    from windtunnel._bundle.models import CheckRecord, Stage
    from windtunnel._core.vocabulary import CheckStatus
    from windtunnel._pipeline.context import StageContext
    from windtunnel._pipeline.plan import Step, execute
    from windtunnel._pipeline.publish import publish

    monkeypatch.setenv("HOME", "/home/tester")  # this machine's home, whatever it really is
    quoted = f"{tmp_path}/runtimes/x failed; see /home/app/.cache/log and /root/.config/y"

    def leaky(ctx: StageContext) -> list[CheckRecord]:
        trace = ctx.traces_dir() / "run.trace.json"
        trace.parent.mkdir(parents=True)
        trace.write_text(json.dumps({"error": quoted}))
        evidence = ctx.write_evidence("leak", {"detail": quoted})
        return [ctx.check("leak", CheckStatus.PASSED, quoted, evidence=[evidence, ctx.relative(trace)])]

    configured = config(tmp_path)
    published = publish(
        configured, execute((build(), Step(Stage.CONFORMANCE, leaky)), configured, Executor())
    )
    assert published.seal is not None
    out = configured.out_dir
    texts = "".join(
        p.read_text() for p in out.rglob("*") if p.is_file() and p.suffix in {".json", ".xml", ".html"}
    )
    assert str(tmp_path) not in texts and "/home/app/" not in texts and "/root/" not in texts
    assert "runtimes/x failed; see ~app/.cache/log and ~root/.config/y" in texts  # and it sealed: it verified
