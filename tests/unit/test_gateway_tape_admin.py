"""The gateway's /wt/tape routes over HTTP: a replay's report read while it runs, a recording flushed on demand.

Real servers on 127.0.0.1 (ServerThread): the gateway app, and the stand-in upstream for record mode; the
harness side is the real GatewayClient.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.standin_upstream import StandinUpstream
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._net.server_thread import ServerThread
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape
from windtunnel.errors import GatewayError


def body(text: str) -> dict[str, Any]:
    return {"model": "small", "messages": [{"role": "user", "content": text}]}


def post(url: str, text: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/chat/completions", json=body(text), timeout=30)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A tape of three calls (a, b, a) recorded through the gateway from the stand-in upstream."""
    path = tmp_path / "t.jsonl"
    with ServerThread(StandinUpstream().app) as upstream:
        mode = RecordMode(upstream=f"{upstream.url}/v1", api_key=None, tape_path=path)
        with ServerThread(create_app(mode, models=["small"])) as gateway:
            for text in ("a", "b", "a"):
                assert post(gateway.url, text).status_code == 200
    return path


def test_flush_writes_the_recording_while_the_gateway_runs_and_later_calls_are_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out" / "run.jsonl"
    with ServerThread(StandinUpstream().app) as upstream:
        mode = RecordMode(upstream=f"{upstream.url}/v1", api_key=None, tape_path=path, tape_name="run")
        with (
            ServerThread(create_app(mode, models=["small"])) as gateway,
            GatewayClient(gateway.url) as client,
        ):
            post(gateway.url, "a")
            post(gateway.url, "b")
            assert client.tape() | {"path": None} == {
                "mode": "record",
                "tape": "run",
                "path": None,
                "upstream": f"{upstream.url}/v1",
                "interactions": 2,
                "written": False,
            }
            flushed = client.flush_tape()
            assert path.is_file()  # on disk before the gateway stops
            assert flushed == {
                "tape": "run",
                "path": str(path),
                "interactions": 2,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            }
            assert client.flush_tape() == flushed  # idempotent
            late = post(gateway.url, "c")
            assert late.status_code == 409
            assert late.json()["error"]["code"] == "tape_already_written"
            assert client.tape()["written"] is True
    assert len(load_tape(path).interactions) == 2


def test_flushing_an_empty_recording_is_refused_with_tape_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    mode = RecordMode(upstream="http://127.0.0.1:9/v1", api_key=None, tape_path=path)
    with ServerThread(create_app(mode, models=["small"])) as gateway, GatewayClient(gateway.url) as client:
        with pytest.raises(GatewayError, match="recorded no interaction") as caught:
            client.flush_tape()
        assert caught.value.reason == "tape_not_recorded"  # type: ignore[attr-defined]
    assert not path.exists()


def test_the_replay_report_says_what_was_consumed_in_order_and_what_is_left(recorded: Path) -> None:
    tape = load_tape(recorded)
    mode = ReplayMode(recorded, clock=lambda: tape.oldest + timedelta(days=2))
    with ServerThread(create_app(mode, models=["small"])) as gateway, GatewayClient(gateway.url) as client:
        assert post(gateway.url, "a").status_code == 200
        assert post(gateway.url, "zzz").status_code == 400
        report = client.tape()
    assert report["tape"]["name"] == "t"
    assert report["tape"]["interactions"] == 3
    assert report["tape"]["recorded_at"] == tape.oldest.isoformat()
    assert (report["requested"], report["consumed"], report["unused"]) == (2, 1, [1, 2])
    assert [request["seq"] for request in report["requests"]] == [0, None]
    assert report["requests"][1]["body"] == body("zzz")
    (refusal,) = report["refusals"]
    assert refusal["code"] == "tape_mismatch"
    assert "/body/messages/0/content" in refusal["message"]
    assert refusal["rerecord_command"] in refusal["message"]
    assert (report["age_days"], report["max_age_days"], report["stale"]) == (2.0, 30, False)
    assert "2 of 3 interaction(s) never requested" in report["report"]


def test_a_stale_tape_in_development_is_served_and_reported_stale(recorded: Path) -> None:
    tape = load_tape(recorded)
    mode = ReplayMode(recorded, certification=False, clock=lambda: tape.oldest + timedelta(days=31))
    with ServerThread(create_app(mode, models=["small"])) as gateway, GatewayClient(gateway.url) as client:
        for text in ("a", "b", "a"):
            assert post(gateway.url, text).status_code == 200
        report = client.tape()
    assert report["stale"] is True
    assert report["consumed"] == 3 and report["unused"] == []
    assert report["warnings"] and "is stale" in report["warnings"][0]


def test_other_modes_have_no_tape() -> None:
    with (
        ServerThread(create_app(ScriptMode(), models=["m"])) as gateway,
        GatewayClient(gateway.url) as client,
    ):
        with pytest.raises(GatewayError, match="script mode") as caught:
            client.tape()
        assert caught.value.reason == "not_tape_mode"  # type: ignore[attr-defined]
        with pytest.raises(GatewayError, match="only record mode writes a tape"):
            client.flush_tape()
