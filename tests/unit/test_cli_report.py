"""`wt report BUNDLE`: renders into an unsigned bundle or beside an archive, never rewrites a signed
report.html into another page (the signature covers it), --out links back into the bundle, --open starts
the browser, and anything that is not a bundle is a one-line usage error."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.report_bundle import make_bundle, signer
from windtunnel._bundle import seal_bundle, verify_bundle


def wt(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "report", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    return done.returncode, done.stdout, done.stderr


def test_a_signed_bundle_rendered_again_is_unchanged_and_still_verifies(tmp_path: Path) -> None:
    key = signer()
    out, _ = make_bundle(tmp_path, key)
    code, said, _ = wt(str(out))
    assert code == 0 and said.strip() == f"report unchanged: {(out / 'report.html').resolve()}"
    assert verify_bundle(out, key.public_pem).valid


def test_a_signed_bundle_whose_page_would_change_is_not_rewritten(tmp_path: Path) -> None:
    key = signer()
    out, _ = make_bundle(tmp_path, key)
    (out / "report.html").write_text("<p>an older Wind Tunnel's report</p>")
    seal_bundle(out, signer=key)  # signed with that page, as an older release would have
    code, _, err = wt(str(out))
    assert code == 2 and "report.html is one of the signed files" in err and "--out" in err
    assert (out / "report.html").read_text() == "<p>an older Wind Tunnel's report</p>"
    code, said, _ = wt(str(out), "--out", str(tmp_path / "pages" / "new.html"))
    assert code == 0 and "report written" in said
    page = (tmp_path / "pages" / "new.html").read_text()
    assert 'href="../out/checks.json"' in page and "conv-link" in page  # links lead back into the bundle
    assert verify_bundle(out, key.public_pem).valid


def test_an_unsigned_bundle_gets_its_report_in_place(tmp_path: Path) -> None:
    out, _ = make_bundle(tmp_path)
    for name in ("attestations/certification.intoto.jsonl", "report.html"):
        (out / name).unlink()
    code, said, _ = wt(str(out))
    assert (
        code == 0 and "report written" in said and 'href="checks.json"' in (out / "report.html").read_text()
    )


def test_an_archive_gets_its_report_beside_it_linking_where_it_extracts(tmp_path: Path) -> None:
    out, published = make_bundle(tmp_path)
    assert published.seal is not None
    before = published.seal.archive.read_bytes()
    code, said, _ = wt(str(published.seal.archive))
    target = tmp_path / "out.report.html"
    assert code == 0 and said.strip() == f"report written: {target}"
    page = target.read_text()
    assert (
        'href="out/checks.json"' in page and page.replace('"out/', '"') == (out / "report.html").read_text()
    )
    assert published.seal.archive.read_bytes() == before


def test_open_starts_the_browser_on_the_report(tmp_path: Path) -> None:
    out, _ = make_bundle(tmp_path)
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(browser.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "BROWSER": str(browser)}  # webbrowser runs $BROWSER with the URL
    code, _, _ = wt(str(out), "--open", env=env)
    assert code == 0 and opened.read_text().strip() == (out / "report.html").resolve().as_uri()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "absent", "does not exist"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "is not a Wind Tunnel bundle: run.json is missing"),
        (lambda p: (p / "x.tar.gz").write_bytes(b"not gzip") and p / "x.tar.gz", "cannot read the archive"),
        (
            lambda p: (p / "notes.txt").write_text("hi") and p / "notes.txt",
            "is neither a bundle directory nor a .tar.gz",
        ),
    ],
    ids=["missing", "empty-directory", "corrupt-archive", "other-file"],
)
def test_what_is_not_a_bundle_is_a_one_line_usage_error(tmp_path: Path, make: object, message: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    code, _, err = wt(str(path))
    assert code == 2 and message in err.splitlines()[0] and "Traceback" not in err
    assert "how to fix:" in err
    assert not list(tmp_path.rglob("*.html"))
