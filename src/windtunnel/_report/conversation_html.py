"""A Conversation as an HTML timeline: user turn, model calls, the three views of each tool call, answer.

Everything that comes from evidence is escaped here, once, at the point it becomes markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from windtunnel._conversation.model import (
    CallView,
    Conversation,
    ConversationTurn,
    Disagreement,
    Finding,
    ModelCallView,
    ToolCallRow,
    View,
)

_VIEW_TITLES = {
    View.MODEL: "model emitted (gateway log)",
    View.MOCK: "mock received (MCP)",
    View.RUNTIME: "runtime reported",
}
_ABSENT = {View.MODEL: "not emitted", View.MOCK: "not received", View.RUNTIME: "not reported"}


def text(value: Any) -> str:
    """Any evidence value as escaped text: strings as they are, the rest as indented JSON."""
    if isinstance(value, str):
        return escape(value)
    return escape(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def render_conversation(conversation: Conversation, anchor: str, check_id: str | None = None) -> str:
    """A closed <details> with id `anchor`; rows get ids `anchor-t<turn>-r<row>` for the diff links."""
    diffs = conversation.disagreements
    count = (
        f'<span class="diff-count">{len(diffs)} difference{"s" if len(diffs) != 1 else ""}</span>'
        if diffs
        else '<span class="no-diff">views agree</span>'
    )
    classes = "conversation has-diffs" if diffs else "conversation"
    check = f' data-check="{escape(check_id)}"' if check_id else ""
    turns = "".join(_turn(turn, conversation, anchor) for turn in conversation.turns)
    error = (
        f'<p class="conv-error">the run stopped: {escape(conversation.error)}</p>'
        if conversation.error
        else ""
    )
    return (
        f'<details class="{classes}" id="{escape(anchor)}"{check}><summary>'
        f'<span class="conv-title">{escape(conversation.title)}</span> · {len(conversation.turns)} turn'
        f"{'s' if len(conversation.turns) != 1 else ''} · {count}</summary>"
        f"{error}{_views(conversation)}{_diff_list(diffs, anchor)}{_findings(conversation.findings)}{turns}"
        "</details>"
    )


def _views(conversation: Conversation) -> str:
    seen = ", ".join(_VIEW_TITLES[view] for view in conversation.views) or "none"
    missing = [_VIEW_TITLES[view] for view in View if view not in conversation.views]
    unseen = f"; not available: {', '.join(missing)}" if missing else ""
    return f'<p class="muted">views: {escape(seen)}{escape(unseen)}</p>'


def _diff_list(diffs: Sequence[Disagreement], anchor: str) -> str:
    if not diffs:
        return ""
    items = []
    for diff in diffs:
        where = f"turn {diff.turn + 1}"
        if diff.row is not None:
            where = (
                f'<a href="#{escape(_row_id(anchor, diff.turn, diff.row))}">{where}, call {diff.row + 1}</a>'
            )
        items.append(
            f'<li class="diff" data-kind="{escape(diff.kind.value)}">{where}: {escape(diff.text)}</li>'
        )
    return f'<ul class="diffs">{"".join(items)}</ul>'


def _findings(findings: Sequence[Finding]) -> str:
    """A check's own comparisons (bytes of each tool result, the session each call served), held or not."""
    if not findings:
        return ""
    items = []
    for finding in findings:
        where = "" if finding.turn is None else f"turn {finding.turn + 1}"
        if finding.model_call is not None:
            where += f", model call {finding.model_call + 1}"
        css = "finding held" if finding.held else "finding diff"
        verdict = "holds" if finding.held else "differs"
        items.append(
            f'<li class="{css}">{escape(where)}{": " if where else ""}{escape(finding.compared)} '
            f"<strong>{verdict}</strong><pre>{text(finding.text)}</pre></li>"
        )
    return f'<ul class="findings">{"".join(items)}</ul>'


def _row_id(anchor: str, turn: int, row: int) -> str:
    return f"{anchor}-t{turn}-r{row}"


def _turn(turn: ConversationTurn, conversation: Conversation, anchor: str) -> str:
    notes: dict[int, list[str]] = {}
    for diff in conversation.disagreements:
        if diff.turn == turn.index and diff.row is not None:
            notes.setdefault(diff.row, []).append(diff.text)
    parts = [f'<section class="turn"><h4>turn {turn.index + 1}</h4>']
    parts.append(_message("user", turn.user if turn.user is not None else "(not recorded)", "user"))
    previous: ModelCallView | None = None
    for step, call in enumerate(turn.model_calls):
        parts.append(_model_call(step, call, previous))
        parts.append(_calls(turn, step, conversation.views, anchor, notes))
        previous = call
    if not turn.model_calls or any(row.step is None for row in turn.tool_calls):
        parts.append(_calls(turn, None, conversation.views, anchor, notes))
    final = turn.final if turn.final is not None else "(no answer text)"
    parts.append(_message("answer", final, "final", title="the final answer the runtime reported"))
    parts.append("</section>")
    return "".join(parts)


def _message(role: str, body: str, css: str, title: str | None = None) -> str:
    hint = f' title="{escape(title)}"' if title else ""
    return (
        f'<div class="msg {css}"{hint}><span class="role">{escape(role)}</span><pre>{text(body)}</pre></div>'
    )


def _model_call(step: int, call: ModelCallView, previous: ModelCallView | None) -> str:
    earlier = previous.messages if previous is not None else []
    shared = len(earlier) if call.messages[: len(earlier)] == earlier else 0
    answer = f"{len(call.tool_calls)} tool call(s)" if call.tool_calls else "text"
    if call.error:
        answer = f"refused: {call.error}"
    sampling = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(call.sampling.items()))
    summary = (
        f"model call {step + 1}"
        + (f" · {call.model}" if call.model else "")
        + f" · X-WT-Session {call.session or '(none)'}"
        + f" · {sampling or 'no sampling parameters'} · answered {answer}"
    )
    before = (
        f"<details><summary>{shared} earlier message(s)</summary>{_messages(call.messages[:shared])}</details>"
        if shared
        else ""
    )
    tools = ", ".join(call.tools) or "none"
    said = _message("assistant", call.content, "assistant") if call.content else ""
    emitted = "".join(_message("tool call", _call_text(c), "assistant") for c in call.tool_calls)
    return (
        f'<details class="model-call"><summary>{escape(summary)}</summary>{before}'
        f'{_messages(call.messages[shared:])}<p class="muted">tools offered: {escape(tools)}</p>'
        f'<p class="muted">sampling: {escape(sampling or "none")}</p>{said}{emitted}</details>'
    )


def _messages(messages: Sequence[Any]) -> str:
    return "".join(_one_message(message) for message in messages)


def _one_message(message: Any) -> str:
    if not isinstance(message, Mapping):
        return _message("?", message, "other")
    role = str(message.get("role") or "?")
    content = message.get("content")
    label = f"{role} ({message['tool_call_id']})" if message.get("tool_call_id") else role
    parts = [_message(label, content if content is not None else "", role)] if content else []
    parts += [_message(f"{role} → tool", _call_text(c), role) for c in message.get("tool_calls") or []]
    return "".join(parts) or _message(label, "(empty)", role)


def _call_text(call: Any) -> str:
    if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
        function = call["function"]
        return f"{function.get('name')} {function.get('arguments')}" + (
            f"  (id {call['id']})" if call.get("id") else ""
        )
    return json.dumps(call, ensure_ascii=False, default=str)


def _calls(
    turn: ConversationTurn, step: int | None, views: Sequence[View], anchor: str, notes: dict[int, list[str]]
) -> str:
    rows = [(index, row) for index, row in enumerate(turn.tool_calls) if row.step == step]
    if not rows:
        return ""
    head = "".join(f"<th>{escape(_VIEW_TITLES[view])}</th>" for view in View)
    body = "".join(_row(index, row, views, anchor, turn.index, notes.get(index, [])) for index, row in rows)
    caption = "" if step is not None else "<caption>calls no model call emitted</caption>"
    return f'<table class="calls">{caption}<tr><th>#</th>{head}<th>result</th></tr>{body}</table>'


def _row(
    index: int, row: ToolCallRow, views: Sequence[View], anchor: str, turn: int, notes: list[str]
) -> str:
    cells = "".join(_cell(getattr(row, view.value), view, view in views) for view in View)
    css = ' class="disagree"' if notes else ""
    rid = escape(_row_id(anchor, turn, index))
    note = "".join(f'<tr class="diff-note"><td colspan="5">{escape(n)}</td></tr>' for n in notes)
    return f'<tr id="{rid}"{css}><td>{index + 1}</td>{cells}<td>{_result(row)}</td></tr>{note}'


def _cell(call: CallView | None, view: View, available: bool) -> str:
    if not available:
        return '<td class="muted">(view not available)</td>'
    if call is None:
        return f'<td class="absent">{escape(_ABSENT[view])}</td>'
    shown = call.argument_text if call.argument_text is not None else call.arguments
    where = f" @ {call.server}" if call.server else ""
    ident = f' <span class="muted">{escape(call.call_id)}</span>' if call.call_id else ""
    return f"<td><code>{escape(str(call.name))}{escape(where)}</code>{ident}<pre>{text(shown)}</pre></td>"


def _result(row: ToolCallRow) -> str:
    parts = []
    if row.mock is not None:
        status = "error" if row.mock.is_error else "answered"
        answer = row.mock.error if row.mock.error else row.mock.result
        parts.append(f'<span class="muted">tool {status}:</span><pre>{text(answer)}</pre>')
    if row.result_to_model is not None:
        parts.append(f'<span class="muted">the model got back:</span><pre>{text(row.result_to_model)}</pre>')
    return "".join(parts) or '<span class="muted">none</span>'
