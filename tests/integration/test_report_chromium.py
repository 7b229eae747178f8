"""report.html in headless Chromium, over a genuine bundle: the real poison runtime that hides its
intermediate tool calls, checked in real containers by the real conformance checks, published and signed.
Opening the failing check's conversation shows the calls the mock received that the runtime did not
report; the page logs no console error. Only two checks run: the rest of a certify is test_certify's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel._bundle.models import Stage
from windtunnel._config import load_settings
from windtunnel._conformance import kit
from windtunnel._core.vocabulary import CertificationResult
from windtunnel._pipeline.config import CertifyConfig
from windtunnel._pipeline.docker_executor import DockerExecutor
from windtunnel._pipeline.plan import PLAN, execute
from windtunnel._pipeline.publish import publish

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.certify]

REPO = Path(__file__).resolve().parents[2]
POISON = "reference-poison-hide_intermediate_tool_calls"
CHECK = f"{POISON}/conformance/intermediate_tool_calls"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Debian's chromium for this test")
        pytest.skip("no chromium on this machine")
    return found


@pytest.fixture(scope="module")
def bundle(
    docker_client: Any, base_image: str, run_label: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The poison (and the reference control) through build and two conformance checks, then publish."""
    out = tmp_path_factory.mktemp("poison-report") / "bundle"
    checks = tuple(c for c in kit.CHECKS if c.id in {"intermediate_tool_calls", "raw_tool_call_shapes"})
    plan = tuple(step for step in PLAN if step.stage in {Stage.BUILD, Stage.CONFORMANCE})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WT_BASE_IMAGE", base_image)
        patch.setenv("WT_SESSION_LABEL", run_label)
        patch.setattr("windtunnel._pipeline.stages.CHECKS", checks)
        config = CertifyConfig.from_settings(load_settings(REPO), runtimes=(POISON,), out_dir=out)
        published = publish(config, execute(plan, config, DockerExecutor()))
    assert published.verdict.result is CertificationResult.FAILED, published.verdict
    assert published.seal is not None  # the poison was caught exactly: a genuine, signed FAILED bundle
    return out


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS[1:])
        context = browser.new_context(offline=True)
        yield context.new_page()
        context.close()
        browser.close()


def open_report(page: Any, path: Path) -> list[str]:
    """Load the report; returns the list the page's console errors and uncaught exceptions go to."""
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    page.goto(path.as_uri())
    return problems


def test_the_failing_checks_conversation_shows_the_calls_the_runtime_did_not_report(
    bundle: Path, page: Any
) -> None:
    problems = open_report(page, bundle / "report.html")
    row = page.locator(f'tr[data-check="{CHECK}"]')
    assert "failed" in row.inner_text()
    conversation = page.locator(f'details.conversation[data-check="{CHECK}"]')
    assert conversation.count() == 1 and not conversation.evaluate("node => node.open")
    row.locator("a.conv-link").click()
    assert conversation.evaluate("node => node.open")
    hidden = conversation.locator("li.diff", has_text="the runtime did not report it")
    assert hidden.count() == 2
    texts = [hidden.nth(i).inner_text() for i in range(2)]
    assert any("the mock received lookup" in text for text in texts), texts
    assert any("the mock received store" in text for text in texts), texts
    assert hidden.first.is_visible()
    # the table shows it side by side: received by the mock, not reported by the runtime
    first = conversation.locator("table.calls tr.disagree").first
    assert "lookup" in first.inner_text() and "not reported" in first.inner_text()
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert problems == []


def test_wt_report_renders_the_archive_to_the_same_page(bundle: Path, page: Any, tmp_path: Path) -> None:
    target = tmp_path / "from-archive.html"
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel._cli.main", "report", f"{bundle}.tar.gz", "--out", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    problems = open_report(page, target)
    page.locator(f'tr[data-check="{CHECK}"] a.conv-link').click()
    assert page.locator("li.diff", has_text="the mock received lookup").first.is_visible()
    assert problems == []
