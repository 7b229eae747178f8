"""The model ladder (windtunnel._core.ladder): read from config, checked by every verb before any run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.contract_c_endpoint import serving
from tests.unit.test_cli_run import FIXTURES, wt
from windtunnel._config import load_settings
from windtunnel._core.ladder import Ladder, check_model
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel.errors import ConfigFileError

PLUGIN = "plugins.usage_plugins:labelled"
CACHE = str(FIXTURES / "packs" / "cache")


def ladder(tmp_path: Path, body: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.windtunnel]\npacks = []\n\n[tool.windtunnel.ladder]\n{body}\n"
    )
    return tmp_path


def test_a_listed_label_passes_and_an_unlisted_one_names_label_list_and_fix() -> None:
    rungs = Ladder(models=("small-1", "large-2"))
    rungs.check("rt", "small-1")
    with pytest.raises(ConfigFileError) as caught:
        rungs.check("rt", "huge-9")
    message = str(caught.value)
    assert "model 'huge-9'" in message and "listed: small-1, large-2" in message
    assert 'add "huge-9" to [tool.windtunnel.ladder] models' in message
    assert caught.value.context["field"] == "ladder.models"


def test_an_unknown_label_is_allowed_unless_the_ladder_says_otherwise() -> None:
    Ladder(models=("small-1",)).check("rt", None)
    with pytest.raises(ConfigFileError, match=r"does not state its model \(model_label\(\) is None\)"):
        Ladder(models=("small-1",), allow_unknown=False).check("rt", None)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('models = "small-1"', "ladder.models must be a list of model labels"),
        ("models = [1]", "ladder.models must be a list of model labels"),
        ('models = ["a"]\nallow_unknown = "no"', "ladder.allow_unknown must be true or false"),
        ('models = ["a"]\nrungs = 2', "ladder has unknown key 'rungs'"),
        ('[tool.windtunnel.ladder.models]\na = "x"', "ladder.models is a table"),
    ],
)
def test_a_bad_ladder_is_one_clear_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigFileError, match=message) as caught:
        load_settings(cwd=ladder(tmp_path, body), env={})
    assert "[tool.windtunnel.ladder] models = [" in (caught.value.hint or "")


def test_no_ladder_accepts_every_label(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.windtunnel]\npacks = []\n")
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.ladder is None
    check_model(settings.ladder, "rt", "anything")
    check_model(settings.ladder, "rt", None)


def test_wt_run_rejects_an_unlisted_model_label_before_any_run(tmp_path: Path) -> None:
    cwd = ladder(tmp_path, 'models = ["test-model-b"]')
    with serving([{"content": "done", "tool_calls": []}]) as (endpoint, url):
        env = {"WT_TEST_MODEL_LABEL": "test-model-a", "WT_INJECT_URL": url}
        done = wt("run", "--runtime", PLUGIN, "--pack", CACHE, cwd=cwd, env=env, tmp=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "answers with model 'test-model-a'" in done.stderr and "listed: test-model-b" in done.stderr
    assert 'how to fix: add "test-model-a" to [tool.windtunnel.ladder] models' in done.stderr
    assert endpoint.requests == []  # refused before anything was sent
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("verb", ["selftest", "prove", "doctor"])
def test_every_verb_that_drives_a_runtime_checks_the_ladder(tmp_path: Path, verb: str) -> None:
    cwd = ladder(tmp_path, 'models = ["test-model-b"]')
    env = {"WT_TEST_MODEL_LABEL": "test-model-a"}
    done = wt(
        verb, "--runtime", PLUGIN, "--pack", str(FIXTURES / "packs" / "tiers"), cwd=cwd, env=env, tmp=tmp_path
    )
    assert done.returncode == 2 and "answers with model 'test-model-a'" in done.stderr


def test_a_listed_label_runs_and_scopes_the_evidence(tmp_path: Path) -> None:
    cwd = ladder(tmp_path, 'models = ["test-model-a"]\nallow_unknown = false')
    with serving([{"content": "done", "tool_calls": []}]) as (_, url):
        env = {"WT_TEST_MODEL_LABEL": "test-model-a", "WT_INJECT_URL": url}
        done = wt("run", "--runtime", PLUGIN, "--pack", CACHE, cwd=cwd, env=env, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    traces = list((tmp_path / "runs").rglob("*.trace.json"))
    scores = list((tmp_path / "runs").rglob("*.score.json"))
    assert traces and all('"model_label": "test-model-a"' in p.read_text() for p in traces + scores)


def test_the_resolver_holds_every_runtime_it_finds_to_the_ladder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One place for every verb: resolving the runtime is what checks its label, before anything is built."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("WT_TEST_MODEL_LABEL", "test-model-a")
    refused = load_settings(cwd=ladder(tmp_path / "a", 'models = ["test-model-b"]'), env={})
    with pytest.raises(ConfigFileError, match="answers with model 'test-model-a'"):
        resolve_runtime(PLUGIN, refused)
    allowed = load_settings(cwd=ladder(tmp_path / "b", 'models = ["test-model-a"]'), env={})
    assert resolve_runtime(PLUGIN, allowed).model_label() == "test-model-a"
