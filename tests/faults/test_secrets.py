"""The live upstream key reaches the gateway container as a read-only file put there before it starts, and
nowhere else: not in any container's Env, Cmd, Args, Entrypoint, Labels or Mounts (`docker inspect`), not in
any container's logs, not in the gateway's request log (what traces are built from), not in a recorded tape.

The upstream is a local stand-in in a container on the run's network (no real model is reachable): it knows
only the SHA-256 of the canary key and answers 401 to any other, so a 200 through the gateway proves the key
was read from the file and sent upstream.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest

from windtunnel._drivers.container_plugin import DriverSettings
from windtunnel._engine.images import BuiltImage
from windtunnel._engine.network import ROLE_LABEL, RUN_LABEL
from windtunnel._engine.stack import ContainerStack
from windtunnel._gateway.upstream_key import KEY_PATH
from windtunnel._tape_runs.containers import record_spec

pytestmark = [pytest.mark.docker]

CANARY = "sk-canary-" + "5ec7e7" * 6
STANDIN_PORT = 8080
STANDIN = f"http://standin:{STANDIN_PORT}/v1"
STANDIN_SCRIPT = """
import hashlib, http.server, json
EXPECTED = {expected!r}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if hashlib.sha256(key.encode()).hexdigest() != EXPECTED:
            self._send(401, {{"error": {{"message": "invalid api key", "type": "invalid_request_error",
                                       "code": "invalid_api_key"}}}})
            return
        model = json.loads(body).get("model", "m")
        self._send(200, {{"id": "chatcmpl-standin", "object": "chat.completion", "created": 1,
                          "model": model,
                          "choices": [{{"index": 0, "finish_reason": "stop",
                                        "message": {{"role": "assistant", "content": "hello"}}}}],
                          "usage": {{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}}})
    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", {port}), Handler).serve_forever()
"""
REQUEST = {"model": "wt-model", "messages": [{"role": "user", "content": "hi"}]}


def start_standin(stack: ContainerStack) -> str:
    """The stand-in upstream on the run network (alias `standin`), with the run's labels; its address."""
    script = STANDIN_SCRIPT.format(expected=hashlib.sha256(CANARY.encode()).hexdigest(), port=STANDIN_PORT)
    container = stack.client.containers.create(
        stack.windtunnel_image,
        entrypoint=["python3", "-c", script],
        labels={**stack.labels, ROLE_LABEL: "upstream"},
        network=stack.network.name,
        networking_config={stack.network.name: stack.client.api.create_endpoint_config(aliases=["standin"])},
        detach=True,
    )
    container.start()
    container.reload()
    return f"http://{container.attrs['NetworkSettings']['Networks'][stack.network.name]['IPAddress']}:{STANDIN_PORT}"


def wait_answering(url: str) -> None:
    for _ in range(100):
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    pytest.fail(f"the stand-in upstream at {url} never answered")


def inspected(client: docker.DockerClient, run_id: str) -> list[dict[str, Any]]:
    return [
        c.attrs
        for c in client.containers.list(
            all=True, filters={"label": f"{RUN_LABEL}={run_id}"}, ignore_removed=True
        )
    ]


def assert_nowhere_but_the_file(client: docker.DockerClient, stack: ContainerStack) -> None:
    everything = inspected(client, stack.run_id)
    assert {attrs["Config"]["Labels"][ROLE_LABEL] for attrs in everything} >= {"gateway", "upstream"}
    for attrs in everything:
        config = attrs["Config"]
        for part in (config.get("Env"), config.get("Cmd"), config.get("Entrypoint"), config.get("Labels")):
            assert CANARY not in json.dumps(part), (attrs["Name"], part)
        assert CANARY not in json.dumps([attrs.get("Args"), attrs.get("Mounts"), attrs.get("HostConfig")])
        assert CANARY not in json.dumps(attrs), attrs["Name"]  # nothing else of `docker inspect` either
        logs = client.containers.get(attrs["Id"]).logs().decode("utf-8", "replace")
        assert CANARY not in logs, (attrs["Name"], logs)
    gateway = next(a for a in everything if a["Config"]["Labels"][ROLE_LABEL] == "gateway")
    assert not [m for m in gateway.get("Mounts") or [] if "secret" in json.dumps(m)]  # a file, not a mount


def modes(client: docker.DockerClient, stack: ContainerStack) -> list[str]:
    """`mode uid gid` of the key file and of its directory, inside the gateway container."""
    selector = [f"{RUN_LABEL}={stack.run_id}", f"{ROLE_LABEL}=gateway"]
    (gateway,) = client.containers.list(filters={"label": selector})
    done = gateway.exec_run(["stat", "-c", "%a %u %g", KEY_PATH, KEY_PATH.rsplit("/", 1)[0]])
    return [str(word) for word in done.output.decode().split()]


def test_live_mode_hands_the_key_over_as_a_read_only_file_and_nowhere_else(
    docker_client: docker.DockerClient, windtunnel_image: BuiltImage, run_label: str
) -> None:
    settings = DriverSettings.from_env(
        {"WT_GATEWAY_MODE": "live", "WT_UPSTREAM_URL": STANDIN, "WT_UPSTREAM_API_KEY": CANARY}
    )
    stack = ContainerStack(
        docker_client, windtunnel_image=windtunnel_image.id, session=run_label, gateway=settings.gateway
    )
    try:
        standin = start_standin(stack)
        wait_answering(standin)
        # The stand-in bites: another key is refused, so the 200 below proves the canary went upstream.
        wrong = httpx.post(
            f"{standin}/v1/chat/completions", json=REQUEST, headers={"authorization": "Bearer x"}
        )
        assert wrong.status_code == 401
        gateway = stack.gateway()
        answered = httpx.post(f"{gateway.base_url}/v1/chat/completions", json=REQUEST, timeout=30.0)
        assert answered.status_code == 200, answered.text
        assert answered.json()["choices"][0]["message"]["content"] == "hello"
        assert modes(docker_client, stack) == ["400", "0", "0", "700", "0", "0"]
        assert CANARY not in json.dumps(gateway.log())  # the request log, what traces are built from
        assert_nowhere_but_the_file(docker_client, stack)
    finally:
        stack.close()


def test_record_mode_hands_the_key_over_the_same_way_and_the_tape_never_holds_it(
    docker_client: docker.DockerClient, windtunnel_image: BuiltImage, run_label: str, tmp_path: Path
) -> None:
    lineage = {"runtime": "reference", "pack": "p", "scenario": "s"}
    spec = record_spec(STANDIN, tmp_path / "tapes", "canary-tape", key=CANARY, lineage=lineage)
    stack = ContainerStack(
        docker_client, windtunnel_image=windtunnel_image.id, session=run_label, gateway=spec
    )
    try:
        wait_answering(start_standin(stack))
        gateway = stack.gateway()
        answered = httpx.post(f"{gateway.base_url}/v1/chat/completions", json=REQUEST, timeout=30.0)
        assert answered.status_code == 200, answered.text
        gateway.flush_tape()
        stack.collect_outputs()  # the tape is copied out of the container (no host mount)
        tape = (tmp_path / "tapes" / "canary-tape.jsonl").read_text(encoding="utf-8")
        assert "hello" in tape and CANARY not in tape
        assert_nowhere_but_the_file(docker_client, stack)
    finally:
        stack.close()
