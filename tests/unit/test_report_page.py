"""report.html (windtunnel._report): each check's conversation under its row, linked from it, differences
marked, every evidence string escaped, nothing loaded, the same page from publish and from `wt report`."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.unit.pipeline_steps import OTHER
from tests.unit.report_bundle import BREAKOUT, HOSTILE, hiding_trace, make_bundle
from windtunnel._conversation.build import from_trace
from windtunnel._report.assets import SCRIPT, STYLE, content_security_policy
from windtunnel._report.conversation_html import render_conversation
from windtunnel._report.page import render_bundle_report

CHECK = f"{OTHER}/conformance/intermediate_tool_calls"
ANCHOR = f"conv-{OTHER}-conformance-intermediate_tool_calls-0"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = make_bundle(tmp_path_factory.mktemp("report"))
    return out


@pytest.fixture(scope="module")
def page(bundle: Path) -> str:
    return (bundle / "report.html").read_text(encoding="utf-8")


def test_a_failing_checks_row_links_to_its_conversation_with_the_difference(page: str) -> None:
    row = re.search(rf'<tr id="check-[^"]+" data-check="{re.escape(CHECK)}">.*?</tr>', page)
    assert row is not None and f'href="#{ANCHOR}"' in row.group(0) and "2 differences" in row.group(0)
    opened = re.search(rf'<details class="([^"]+)" id="{ANCHOR}" data-check="{re.escape(CHECK)}">', page)
    assert opened is not None and opened.group(1) == "conversation has-diffs"
    conversation = page[opened.start() :]
    conversation = conversation[: conversation.index("</details></td></tr>")]
    assert (
        "the mock received lookup {&quot;key&quot;: &quot;alpha&quot;} but the runtime did not report it"
        in conversation
    )
    assert conversation.count('<td class="absent">not reported</td>') == 2
    assert (
        "model call 1 · wt-scripted · X-WT-Session (none) · temperature=0 · answered 2 tool call(s)"
        in conversation
    )
    assert "the model got back:" in conversation  # the tool result the next model call carried


def test_a_selftest_trace_is_shown_as_its_conversation(page: str) -> None:
    assert f'href="#conv-{OTHER}-selftest-kit-two_step-golden-0"' in page
    assert f'id="conv-{OTHER}-selftest-kit-two_step-golden-0"' in page
    assert f'href="traces/{OTHER}/selftest/kit/two_step.trace.json"' in page


def test_every_evidence_string_is_escaped(page: str) -> None:
    assert HOSTILE not in page and "<img" not in page and 'onerror="window' not in page
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page
    assert page.count("<script") == 1  # the page's own


def test_the_page_loads_nothing_and_runs_only_its_own_script_and_style(page: str) -> None:
    policy = content_security_policy()
    assert "default-src 'none'" in policy and "http" not in policy
    for inline in (SCRIPT, STYLE):
        digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert f"<script>{SCRIPT}</script>" in page and f"<style>{STYLE}</style>" in page
    assert not re.search(r"""(src|href)=["'](https?:)?//""", page)  # no network URL anywhere


def test_publish_and_a_later_render_give_the_same_page(bundle: Path, page: str) -> None:
    assert render_bundle_report(bundle) == page
    assert 'href="../out/checks.json"' in render_bundle_report(bundle, link_base="../out/")


def test_evidence_that_is_no_conversation_is_named_not_fatal(tmp_path: Path) -> None:
    out, _ = make_bundle(tmp_path)
    evidence = out / "evidence" / OTHER / "conformance" / "intermediate_tool_calls.json"
    data = json.loads(evidence.read_text())
    data["conversations"] = [{"title": "broken"}]
    evidence.write_text(json.dumps(data))
    rendered = render_bundle_report(out)
    assert (
        "intermediate_tool_calls.json could not be read as a conversation: runtime: Field required"
        in rendered
    )


def test_evidence_outside_the_bundle_is_never_read(tmp_path: Path) -> None:
    out, _ = make_bundle(tmp_path)
    secret = tmp_path / "secret.trace.json"
    secret.write_text(hiding_trace("outside").model_dump_json())
    checks = json.loads((out / "checks.json").read_text())
    checks["checks"][0]["evidence"] = ["../secret.trace.json", "/etc/passwd"]
    (out / "checks.json").write_text(json.dumps(checks))
    rendered = render_bundle_report(out)
    assert "secret.trace.json" not in rendered and "passwd" not in rendered


def test_repeated_identical_calls_render_as_separate_aligned_rows() -> None:
    trace = hiding_trace("r")
    calls = [c for r in trace.model_requests or [] for c in (r["response"].get("tool_calls") or [])][:1] * 2
    requests = [dict((trace.model_requests or [])[0], response={"tool_calls": calls})]
    received = [(trace.mcp_calls or [])[0]] * 2
    turns = [
        trace.turns[0].model_copy(update={"tool_calls": [{"name": "lookup", "arguments": {"key": "alpha"}}]})
    ]
    html = render_conversation(
        from_trace(
            trace.model_copy(update={"model_requests": requests, "mcp_calls": received, "turns": turns})
        ),
        "c",
    )
    assert html.count('<tr id="c-t0-r') == 2
    assert html.count('<td class="absent">not reported</td>') == 1 and 'href="#c-t0-r1"' in html
    assert BREAKOUT not in html


def test_a_checks_own_comparisons_and_each_calls_session_show_in_its_conversation() -> None:
    from windtunnel._conversation.build import TurnEvidence, conversation
    from windtunnel._conversation.model import Finding

    request = {
        "index": 3,
        "session": "wt-kit-attr-a-<x>",
        "model": "m",
        "messages": [{"role": "user", "content": "read"}],
        "response": {"role": "assistant", "content": "done"},
        "status": 200,
    }
    built = conversation(
        title="session a",
        runtime="r",
        source="session",
        turns=[TurnEvidence("read", [request], [], "done")],
        mock_calls=None,
    ).model_copy(
        update={
            "findings": [
                Finding(
                    turn=0,
                    model_call=0,
                    compared="the volume result",
                    held=True,
                    text="65536 bytes, identical",
                ),
                Finding(turn=None, compared="the X-WT-Session header", held=False, text="served <b>"),
            ]
        }
    )
    html = render_conversation(built, "conv-x")
    assert "X-WT-Session wt-kit-attr-a-&lt;x&gt;" in html
    assert '<li class="finding held">turn 1, model call 1: the volume result <strong>holds</strong>' in html
    assert (
        '<li class="finding diff">the X-WT-Session header <strong>differs</strong><pre>served &lt;b&gt;</pre>'
        in html
    )
