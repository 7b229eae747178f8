"""The bundle archive: reproducible bytes, fixed metadata, and an extraction that refuses unsafe entries."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from tests.unit.test_bundle_samples import NOW, write_sample
from windtunnel._bundle import Signer, seal_bundle, verify_bundle
from windtunnel._bundle.archive import extract_archive, write_archive
from windtunnel._bundle.layout import LayoutError


def tree(root: Path) -> Path:
    for name, text in {"b.txt": "b", "a/z.json": "{}", "a/y/x.txt": "x", "c.txt": "c"}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_same_files_give_the_same_bytes(tmp_path: Path) -> None:
    one = tree(tmp_path / "one" / "bundle")
    two = tree(tmp_path / "two" / "bundle")
    os.utime(two / "b.txt", (1_000_000, 1_000_000))
    (two / "c.txt").chmod(0o600)
    first = write_archive(one, tmp_path / "1.tar.gz").read_bytes()
    second = write_archive(two, tmp_path / "2.tar.gz").read_bytes()
    assert first == second


def test_entries_are_sorted_with_fixed_metadata(tmp_path: Path) -> None:
    archive = write_archive(tree(tmp_path / "bundle"), tmp_path / "b.tar.gz")
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [
        "bundle",
        "bundle/a",
        "bundle/a/y",
        "bundle/a/y/x.txt",
        "bundle/a/z.json",
        "bundle/b.txt",
        "bundle/c.txt",
    ]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    assert {m.mode for m in members if m.isfile()} == {0o644}


def test_a_symlink_in_the_tree_is_refused(tmp_path: Path) -> None:
    root = tree(tmp_path / "bundle")
    (root / "link").symlink_to(root / "b.txt")
    with pytest.raises(LayoutError, match="symlink"):
        write_archive(root, tmp_path / "b.tar.gz")


def _archive_with(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        member.size = len(data) if member.isfile() else 0
        tar.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return path


@pytest.mark.parametrize("name", ["../escape.txt", "/abs.txt", "bundle/../../x"])
def test_unsafe_names_are_refused(tmp_path: Path, name: str) -> None:
    archive = _archive_with(tmp_path, tarfile.TarInfo(name), b"x")
    with pytest.raises(LayoutError, match="not a safe relative file name"):
        extract_archive(archive, tmp_path / "into")
    assert not (tmp_path / "escape.txt").exists()


def test_links_are_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("bundle/run.json")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    with pytest.raises(LayoutError, match="link or special file"):
        extract_archive(_archive_with(tmp_path, link), tmp_path / "into")


def test_a_file_added_to_the_archive_is_rejected(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    root.mkdir()
    signer = Signer.ephemeral()
    write_sample(root, origin=signer.origin)
    result = seal_bundle(root, signer=signer, now=NOW)
    (root / "smuggled.txt").write_text("not signed")
    write_archive(root, result.archive)
    report = verify_bundle(result.archive, signer.public_pem, now=NOW)
    assert (report.valid, report.check) == (False, "subjects.unlisted")
    assert "smuggled.txt" in (report.reason or "")


def test_an_archive_packed_with_tar_dot_verifies(tmp_path: Path) -> None:
    # A user re-packing with `tar czf b.tar.gz -C bundle .` gets `./` names; that is still the bundle.
    root = tmp_path / "bundle"
    root.mkdir()
    signer = Signer.ephemeral()
    write_sample(root, origin=signer.origin)
    seal_bundle(root, signer=signer, now=NOW)
    repacked = tmp_path / "repacked.tar.gz"
    with tarfile.open(repacked, "w:gz") as tar:
        tar.add(root, arcname=".")
    report = verify_bundle(repacked, signer.public_pem, now=NOW)
    assert report.valid, report.reason
