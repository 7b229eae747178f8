"""Cold `wt certify` of the reference runtime on a fresh machine: from `pip install` to PASSED, base image
included, against the container floor measured in the same run.

A fresh machine is played by parts of this one that hold nothing yet, each timed:
1. `pip install --no-cache-dir -e` of this checkout into a new virtualenv (dependencies from PyPI), as
   README.md installs it (the runtime images are built from the checkout);
2. the base image bootstrapped from Debian packages (debootstrap + docker import, under a tag of its own,
   removed afterwards): what `wt certify` does first on a machine with no registry and no base image;
3. `wt certify` from that virtualenv against an empty Docker engine (a Docker-in-Docker container on a new,
   empty state volume: tests/dind/simulation.py's engine) with an empty cache directory. That engine gets
   the base image from this machine's engine (`cold time: base image`), so that transfer is counted in
   place of the bootstrap, which step 2 measured.
Cold certify = 1 + 2 + 3 - the transfer. Target: <= 4 minutes. Prints `wt certify`'s own cold time lines.
Run: `python bench/bench_cold.py` (needs a Docker engine, debootstrap and PyPI; ~5-10 minutes).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import docker
from bench_certify import container_floor
from load import load_line

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.dind import simulation  # noqa: E402  (the one engine wiring; the repo root is on the path now)

TARGET_S = 240.0
KEY = REPO / "tests" / "fixtures" / "keys" / "test-signer.pem"  # a test fixture key, never a real one
TRANSFER = re.compile(r"cold time: base image ([0-9.]+) s")


def timed(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(f"{' '.join(command[:4])} ... exited {done.returncode}: no measurement\n")
        sys.stderr.write(f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}\n")
        raise SystemExit(1)
    return seconds, done


def pip_install(venv: Path) -> float:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir"]
    return timed([*pip, "-e", str(REPO)])[0]


def bootstrap(client: docker.DockerClient, venv: Path) -> float:
    tag = f"windtunnel/bench-cold-base:{uuid.uuid4().hex[:8]}"
    seconds = timed([str(venv / "bin" / "wt"), "images", "bootstrap", "--tag", tag])[0]
    client.images.remove(tag)  # this bench's own tag
    return seconds


def certify_on_empty_engine(client: docker.DockerClient, venv: Path, work: Path) -> tuple[float, str]:
    image = simulation.dind_image(client, REPO / ".wt-cache" / "dind")
    state = client.volumes.create(f"wt-bench-cold-{uuid.uuid4().hex[:8]}", labels=simulation.LABELS)
    try:
        with simulation.engine(client, image, state.name) as (_network, port):
            env = {
                "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
                "HOME": str(work),
                "DOCKER_HOST": f"tcp://127.0.0.1:{port}",
                "WT_CACHE_DIR": str(work / "cache"),
                "WT_LOCK_DIR": str(work / "locks"),
            }
            command = [str(venv / "bin" / "wt"), "certify", "--out", str(work / "bundle"), "--key", str(KEY)]
            seconds, done = timed(command, cwd=REPO, env=env)
    finally:
        state.remove(force=True)
    return seconds, done.stderr


def main() -> int:
    client = docker.from_env()
    print(load_line())
    floor = container_floor(client)
    with tempfile.TemporaryDirectory(prefix="wt-bench-cold-") as tmp:
        work = Path(tmp)
        pip_s = pip_install(work / "venv")
        print(f"pip install (fresh venv, no pip cache): {pip_s:.1f} s", flush=True)
        base_s = bootstrap(client, work / "venv")
        print(f"base image bootstrapped from Debian packages: {base_s:.1f} s", flush=True)
        certify_s, stderr = certify_on_empty_engine(client, work / "venv", work)
    transfers = [float(seconds) for seconds in TRANSFER.findall(stderr)]
    for line in stderr.splitlines():
        if "cold time:" in line:
            print(f"  {line.strip()}")
    total = pip_s + base_s + certify_s - sum(transfers)
    verdict = "met" if total <= TARGET_S else "MISSED"
    print(f"wt certify on an empty engine: {certify_s:.1f} s (base image transfer {sum(transfers):.1f} s)")
    print(
        f"cold certify: {total:.0f} s = {total / floor:.0f} container floors ({floor:.2f} s each); "
        f"target <= {TARGET_S:.0f} s: {verdict}"
    )
    print(load_line())
    return 0  # a miss is a measurement, printed above; only a run that could not measure exits non-zero


if __name__ == "__main__":
    sys.exit(main())
