"""The upstream key: a key file wins over the environment variable; bad files are usage errors naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel._gateway.upstream_key import KEY_ENV, KEY_FILE_ENV, key_file, read_key_file, upstream_key
from windtunnel.errors import UsageError


def test_the_flag_wins_over_the_file_variable_which_wins_over_the_key_variable(tmp_path: Path) -> None:
    flagged, named = tmp_path / "flagged", tmp_path / "named"
    flagged.write_text("key-from-the-flag\n", encoding="utf-8")
    named.write_text("  key-from-the-variable  \n", encoding="utf-8")
    env = {KEY_FILE_ENV: str(named), KEY_ENV: "key-from-env"}
    assert upstream_key(env, given=flagged) == "key-from-the-flag"
    assert upstream_key(env) == "key-from-the-variable"
    assert key_file(env, None) == named
    assert upstream_key({KEY_ENV: "key-from-env"}) == "key-from-env"
    assert upstream_key({"OTHER": "k"}, key_env="OTHER") == "k"
    assert upstream_key({}) is None and key_file({}, None) is None


@pytest.mark.parametrize(
    ("content", "why"),
    [(None, "cannot read the upstream key file"), ("\n", "is empty"), ("two\nlines", "more than one word")],
)
def test_a_key_file_that_is_missing_empty_or_not_one_key_is_a_usage_error(
    tmp_path: Path, content: str | None, why: str
) -> None:
    path = tmp_path / "key"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=why) as caught:
        read_key_file(path)
    assert str(path) in caught.value.message
    assert caught.value.hint
