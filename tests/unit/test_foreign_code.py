"""foreign_code(): a plugin's or pack's crash becomes our error naming it; our own errors pass as they are."""

from __future__ import annotations

import pytest

from windtunnel._core.foreign import foreign_code
from windtunnel.errors import PackError, PluginError, UsageError


def test_a_crash_becomes_the_named_error_with_hint_note_and_context() -> None:
    with (
        pytest.raises(PluginError) as caught,
        foreign_code(
            PluginError,
            "runtime plugin 'x': build()",
            hint="fix build()",
            note="\n  loaded from: pkg:x",
            plugin="x",
        ),
    ):
        raise KeyError("model")
    error = caught.value
    assert str(error).startswith("runtime plugin 'x': build() raised KeyError: 'model'\n  loaded from: pkg:x")
    assert error.hint == "fix build()"
    assert error.context == {"plugin": "x"}
    assert isinstance(error.__cause__, KeyError)


def test_our_own_error_passes_unchanged() -> None:
    ours = UsageError("bad field", hint="fix it")
    with pytest.raises(UsageError) as caught, foreign_code(PackError, "pack 'p': factory", hint="h"):
        raise ours
    assert caught.value is ours


def test_no_exception_no_error() -> None:
    with foreign_code(PackError, "pack 'p': factory", hint="h"):
        value = 1
    assert value == 1
