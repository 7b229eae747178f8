"""windtunnel.testing without containers: the scripted-model helper, the reply reader, and that the pytest
fixtures are registered but start (and import) nothing until a test asks for one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from windtunnel.spi import ReferenceDecision, ReferenceToolCall
from windtunnel.testing import Reply, ScriptedModel

OPT_IN = """
import sys

def test_nothing_container_related_was_imported():
    assert "testcontainers" not in sys.modules
    assert "windtunnel._testing.stack" not in sys.modules
"""


def test_a_scripted_model_is_the_gateway_s_decisions_in_order() -> None:
    script = ScriptedModel().calls_tool("lookup_order", {"order_id": "A-1"}, note="x").answers("Done.")
    assert script.decisions == (
        ReferenceDecision(tool_calls=(ReferenceToolCall("lookup_order", {"order_id": "A-1", "note": "x"}),)),
        ReferenceDecision(content="Done."),
    )
    both = ScriptedModel().calls_tools(("a", {}), ("b", {"n": 1}))
    assert [call.name for call in both.decisions[0].tool_calls] == ["a", "b"] and len(both) == 1


def test_a_reply_reads_the_runtime_s_report_in_the_mock_s_shape() -> None:
    wire = {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'}
    openai = {"choices": [{"message": {"content": "ok", "tool_calls": [{"function": wire}]}}]}
    reply = Reply.of(openai)
    assert reply.content == "ok" and reply.tool_names == ["lookup_order"]
    assert reply.tool_calls == [{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]
    assert Reply.of({"content": "plain", "tool_calls": []}).tool_calls == []


def test_the_fixtures_are_registered_and_start_nothing_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "test_opt_in.py").write_text(OPT_IN)
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
    listed = subprocess.run([*base, "--fixtures", str(tmp_path)], capture_output=True, text=True, check=False)
    assert all(name in listed.stdout for name in ("wt_stack", "wt_gateway", "wt_mcp")), listed.stdout
    ran = subprocess.run([*base, "-q", str(tmp_path)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr


def test_the_docs_example_is_the_example_test_ci_runs() -> None:
    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "testing.md").read_text(encoding="utf-8")
    block = docs.split("## A complete example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    example = (root / "runtimes" / "openai-agents" / "tests" / "test_with_windtunnel.py").read_text()
    assert block.strip() in example
