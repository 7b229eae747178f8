"""long_tool_results: the kit's documents, and the byte comparison of what the model got with what the
mock served, on the real kit mock's answers: whole and contiguous passes (framing recorded), a change fails."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel._conformance.byte_diff import Framing, first_difference, framing, skip_framing
from windtunnel._conformance.checks_bytes import (
    DOCUMENTS,
    LONG_SCRIPT,
    compare_results,
    framed_results,
    judged,
    served_documents,
)
from windtunnel._conformance.model import CheckFailed, OptionalAbsent
from windtunnel._packs.kitpack.documents import SIZES, document
from windtunnel._packs.kitpack.pack import notes_server
from windtunnel._runtimes.mcp_client import ResultLimit
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


def test_framing_finds_the_served_text_whole_and_names_the_bytes_around_it() -> None:
    served = "naïve ✓\r\n"
    assert framing(served, served) == Framing(before_bytes=0, after_bytes=0, before="", after="")
    found = framing(served, "Wall time: 0.01 seconds\nOutput:\n" + served + "\n")
    assert found is not None and (found.before_bytes, found.after_bytes) == (32, 1)
    assert found.before.endswith("Output:\n") and found.after == "\n"
    assert "framed by 32 bytes before" in found.describe()
    assert framing(served, "Output:\n" + served[:-2]) is None  # framed, then cut: not whole
    assert framing(served, served.replace("ï", "i")) is None
    assert skip_framing("abc", "abc") == (0, "abc")
    long = "a title line\n" + "ü" * 100
    assert skip_framing(long, "head\n" + long[:60]) == (5, long[:60])  # its opening found after the framing
    assert skip_framing(long, "head\n" + long[:5]) == (0, "head\n" + long[:5])  # cut inside its opening


def test_a_result_passed_on_whole_inside_framing_holds_and_the_framing_is_recorded() -> None:
    _, served = _served()
    requests = _requests(lambda _name, text: f"Wall time: 0.0249 seconds\nOutput:\n{text}")
    findings = compare_results(requests, served)
    assert findings and all(f.held for f in findings)
    assert "whole and contiguous, framed by 34 bytes before" in findings[0].text
    framed = framed_results(requests, served)
    assert len(framed) == len(findings)
    assert {(f["before_bytes"], f["after_bytes"]) for f in framed} == {(34, 0)}
    assert framed_results(_requests(lambda _name, text: text), served) == []  # identical: no framing


@pytest.mark.parametrize(
    "change",
    [
        lambda text: text[:1024] + "…",  # the poison truncate_long_tool_results, behind the same framing
        lambda text: text.rstrip("\n"),
        lambda text: text.replace("\r\n", "\n"),
        lambda text: text.replace("日本語", "nihongo"),
    ],
)
def test_framing_does_not_excuse_a_changed_result(change: Any) -> None:
    _, served = _served()
    header = "Wall time: 0.0249 seconds\nOutput:\n"
    findings = compare_results(
        _requests(lambda name, text: header + (change(text) if name == "volume" else text)), served
    )
    broken = [f for f in findings if not f.held]
    assert broken and {f.model_call for f in broken} == {2}
    # the offset counts from where the served text begins in the result, not from the framing's first byte
    assert broken[0].text.startswith(f"after {len(header)} bytes of framing, the volume result differs")
    assert "from byte 0 on" not in broken[0].text


LIMIT = ResultLimit(50000, "longer results are saved to a file and previewed")


def _preview(name: str, text: str) -> str:
    """What Claude Code hands the model for an MCP result over its 50,000-character threshold."""
    if len(text) <= LIMIT.chars:
        return text
    saved = f"Output too large. Full output saved to: /s/{name}.txt"
    return f"<persisted-output>\n{saved}\n{text[:2000]}\n</persisted-output>"


def _judged(result: Any, limit: ResultLimit | None) -> dict[str, Any]:
    _, served = _served()
    requests = _requests(result)
    return judged(requests, served, compare_results(requests, served), limit)


def test_a_declared_result_limit_makes_an_altered_longer_result_info_with_what_reached_the_model() -> None:
    assert len(document("chapter")) < LIMIT.chars < len(document("volume"))  # one document on each side
    with pytest.raises(OptionalAbsent) as info:
        _judged(_preview, LIMIT)
    assert info.value.detail == (
        "declared not handled ([mcp] result_limit): results over 50000 characters: longer results are saved "
        f"to a file and previewed; arrived altered: volume ({len(document('volume'))} characters)"
    )
    evidence = info.value.evidence
    assert evidence["result_limit"] == {"chars": 50000, "reason": LIMIT.reason}
    assert evidence["over_limit"]["volume"].startswith("<persisted-output>")  # what the model got, kept
    altered = {f["compared"] for f in evidence["compared"] if not f["held"]}
    assert altered == {"the read_document(name='volume') result the model was sent, with the mock's answer"}


def test_a_declared_result_limit_excuses_nothing_up_to_it_and_is_silent_when_all_held() -> None:
    # the poison truncate_long_tool_results cuts the 4 KiB and 16 KiB documents too: below the limit, FAILED
    with pytest.raises(CheckFailed, match="model call 1: the page result differs"):
        _judged(lambda _name, text: text[:1024] + "…" if len(text) > 1024 else text, LIMIT)
    assert "volume" in _judged(lambda _name, text: text, LIMIT)["served"]  # all whole: PASSED as before
    with pytest.raises(CheckFailed, match="the volume result"):
        _judged(_preview, None)  # no declaration: the preview fails as it always did
