"""long_tool_results: the kit's documents, and the byte comparison of what the model got with what the
mock served, on the real kit mock's answers."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._conformance.byte_diff import first_difference
from windtunnel._conformance.checks_bytes import DOCUMENTS, LONG_SCRIPT, compare_results, served_documents
from windtunnel._packs.kitpack.documents import SIZES, document
from windtunnel._packs.kitpack.pack import notes_server
from windtunnel._wire.openai_chat import decision_message


def test_documents_have_their_exact_size_and_the_content_that_must_survive() -> None:
    assert max(SIZES.values()) >= 64 * 1024
    for name, size in SIZES.items():
        text = document(name)
        assert len(text.encode("utf-8")) == size
        assert text == document(name)  # deterministic: two runs serve the same bytes
    longest = document("volume")
    assert "日本語" in longest and "🧪" in longest and "\r\n" in longest and "\t" in longest
    assert '"child": {' in longest and "\n" + " " * 20 in longest  # nested and indented JSON
    assert not longest.startswith(("{", "[")) and longest.endswith("\n")


def test_first_difference_names_the_byte_offset_and_both_excerpts() -> None:
    assert first_difference("naïve ✓", "naïve ✓") is None
    found = first_difference("abc ü def", "abc u def")
    assert found is not None and found.offset == 4
    assert "ü" in found.served_excerpt and "u def" in found.got_excerpt
    cut = first_difference("x" * 2000, "x" * 1024)
    assert cut is not None and (cut.offset, cut.served_bytes, cut.got_bytes) == (1024, 2000, 1024)
    assert "from byte 1024" in cut.describe("the volume result")


def _served() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The real kit mock's call log for the script's document calls, and the texts it served."""
    mock = notes_server()
    for decision in LONG_SCRIPT:
        for call in decision.tool_calls:
            mock.call(call.name, dict(call.arguments))
    calls = mock.calls()
    return calls, served_documents(calls)


def _requests(result: Any) -> list[dict[str, Any]]:
    """The turn's chat model calls as a runtime passing `result(name, served text)` on would send them."""
    _, served = _served()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read"}]
    requests = [{"messages": list(messages)}]
    for decision in LONG_SCRIPT[:-1]:
        message = decision_message(decision)
        messages.append({"role": "assistant", "content": None, "tool_calls": message["tool_calls"]})
        for call, native in zip(decision.tool_calls, message["tool_calls"], strict=True):
            name = call.arguments["name"]
            messages.append(
                {"role": "tool", "tool_call_id": native["id"], "content": result(name, served[name])}
            )
        requests.append({"messages": list(messages)})
    return requests


def test_results_passed_on_unchanged_hold_in_every_model_call() -> None:
    calls, served = _served()
    assert sorted(served) == sorted(DOCUMENTS) and len(calls) == len(DOCUMENTS)
    findings = compare_results(_requests(lambda _name, text: text), served)
    # two results in the second model call, four in the third: each compared again where it is re-sent
    assert [f.model_call for f in findings] == [1, 1, 2, 2, 2, 2]
    assert all(f.held for f in findings)
    as_parts = compare_results(_requests(lambda _name, text: [{"type": "text", "text": text}]), served)
    assert all(f.held for f in as_parts)


@pytest.mark.parametrize(
    ("change", "offset"),
    [
        # a log preview limit applied to the transcript: 1024 characters, more bytes (offsets count bytes)
        (lambda text: text[:1024] + "…", len(document("volume")[:1024].encode("utf-8"))),
        (lambda text: text.rstrip("\n"), None),  # trailing whitespace trimmed
        (lambda text: text.replace("\r\n", "\n"), None),  # line endings normalised
        (lambda text: text.encode("ascii", "backslashreplace").decode(), None),  # re-encoded
    ],
)
def test_a_changed_result_is_reported_with_call_offset_and_excerpts(change: Any, offset: int | None) -> None:
    _, served = _served()
    findings = compare_results(
        _requests(lambda name, text: change(text) if name == "volume" else text), served
    )
    broken = [f for f in findings if not f.held]
    assert broken and {f.model_call for f in broken} == {2}
    assert "volume" in broken[0].compared and "served" in broken[0].text and "received" in broken[0].text
    if offset is not None:
        assert f"from byte {offset} on" in broken[0].text
