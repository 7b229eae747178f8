"""The upstream key reaches a gateway container as a read-only file, never as its env, command line or a
host bind mount (the container side with a real engine: tests/faults/test_secrets.py)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from windtunnel._drivers.container_plugin import DriverSettings
from windtunnel._engine.files import secret_files
from windtunnel._gateway.upstream_key import KEY_PATH
from windtunnel.errors import UsageError

CANARY = "sk-canary-" + "c4" * 16


def test_the_archive_holds_the_file_0400_in_a_0700_directory_owned_by_root() -> None:
    with tarfile.open(fileobj=io.BytesIO(secret_files({KEY_PATH: CANARY + "\n"}))) as archive:
        members = {member.name: member for member in archive.getmembers()}
        assert sorted(members) == ["run/secrets", "run/secrets/upstream_api_key"]  # /run itself is left alone
        key, directory = members["run/secrets/upstream_api_key"], members["run/secrets"]
        assert (key.mode, key.uid, key.gid, directory.mode) == (0o400, 0, 0, 0o700)
        stream = archive.extractfile(key)
        assert stream is not None and stream.read().decode() == CANARY + "\n"


@pytest.mark.parametrize("source", ["env", "file"])
def test_live_mode_hands_the_key_over_as_a_file(tmp_path: Path, source: str) -> None:
    env = {"WT_GATEWAY_MODE": "live", "WT_UPSTREAM_URL": "http://upstream.test/v1"}
    if source == "env":
        env["WT_UPSTREAM_API_KEY"] = CANARY
    else:
        (tmp_path / "key").write_text(CANARY + "\n", encoding="utf-8")
        env["WT_UPSTREAM_KEY_FILE"] = str(tmp_path / "key")
    gateway = DriverSettings.from_env(env).gateway
    assert gateway.extra_args == ("--upstream", "http://upstream.test/v1", "--upstream-key-file", KEY_PATH)
    assert gateway.secrets == {KEY_PATH: CANARY + "\n"} and not gateway.env and not gateway.files
    assert CANARY not in repr(gateway) and CANARY not in repr(DriverSettings.from_env(env))


def test_live_mode_without_a_key_passes_no_key_file_and_a_bad_key_file_is_one_error(tmp_path: Path) -> None:
    env = {"WT_GATEWAY_MODE": "record", "WT_UPSTREAM_URL": "http://upstream.test/v1"}
    assert DriverSettings.from_env(env).gateway.extra_args == ("--upstream", "http://upstream.test/v1")
    with pytest.raises(UsageError, match="cannot read the upstream key file"):
        DriverSettings.from_env({**env, "WT_UPSTREAM_KEY_FILE": str(tmp_path / "missing")})
