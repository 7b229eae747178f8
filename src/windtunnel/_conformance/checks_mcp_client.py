"""The MCP client checks (`mcp_client/*`): content a tool result holds besides text reaches the model in the
form the runtime's wire supports, never dropped or mangled (docs/conformance.md, "MCP client").

Each check makes one scripted call to a tool of the media pack (windtunnel._packs.mediapack), whose result
is fixed data, and compares three things: what the mock served, what the model was sent for that call in
the declared wire's own shapes (the gateway's log, never normalised), and what the runtime reported. A
content type the runtime does not declare in `[mcp] content` is INFO, never PASSED or FAILED.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._conformance.checks_results import answered_items
from windtunnel._conformance.model import CheckFailed, OptionalAbsent
from windtunnel._conformance.subject import Subject, call, say, tools
from windtunnel._packs.loader import media_pack
from windtunnel._packs.mediapack.pack import (
    CAPTION,
    LINK_NAME,
    LINK_URI,
    PNG,
    PNG_TYPE,
    POLICY_TEXT,
    POLICY_URI,
    RESOURCE_TEXT,
    RESOURCE_URI,
    SOURCE,
    WAV,
    WAV_TYPE,
)
from windtunnel._runner.evidence import mcp_calls, mcp_requests
from windtunnel._trace.shapes import call_name, said
from windtunnel._wire.dialect import Said
from windtunnel._wire.reading import text_parts_of
from windtunnel._wire.tools import bare

DONE = "wt-mcp-client-done"
PNG_B64 = base64.b64encode(PNG).decode("ascii")
WAV_B64 = base64.b64encode(WAV).decode("ascii")
NATIVE_IMAGE = {
    "chat": 'an image_url part ("data:image/png;base64,...")',
    "messages": 'an image block (source.type "base64")',
    "responses": 'an input_image part ("data:image/png;base64,...")',
}


def declared(subject: Subject, content: str) -> None:
    """INFO, never PASSED: the runtime does not declare it hands the model this content type."""
    if content not in subject.mcp.content:
        raise OptionalAbsent(
            f"declares no {content} content ([mcp] content in runtime.toml): not measured",
            {"declared": sorted(subject.mcp.content)},
        )


def one_call(
    subject: Subject, tool: str, *, answers: Sequence[str] = ()
) -> tuple[Said, Mapping[str, Any], dict[str, Any]]:
    """One scripted call of `tool`: the result item the model was sent for it, that model call as logged,
    and the evidence (what the mock served and received, what it sent the client during the call, what
    the runtime reported). `answers` are model replies scripted between the call and the final answer
    (a sampling request answered through the model)."""
    script = [tools(call(tool)), *(say(answer) for answer in answers), say(DONE)]
    with subject.scripted(script, name=f"mcp_client-{tool}", pack=media_pack()) as session:
        subject.needs_model_evidence(session)
        record = session.turn(f"Use the {tool} tool, then answer.", f"wt-kit-mcp-client-{tool}")
        received = mcp_calls(session.mcps) or []
        # A 2026-07-28 client is asked for input by the call's first round (recorded as a request); one
        # that refuses the input never sends the retry the mock records as the call.
        rounds = [r for r in mcp_requests(session.mcps) if _round_of(r, tool)] if not received else []
    reported = [bare(call_name(c) or "?") for c in record.read.tool_calls]
    names = [str(c.get("name")) for c in received]
    evidence: dict[str, Any] = {
        "served": [_shown(c.get("result")) for c in received],
        "received": names,
        "reported": reported,
    }
    exchanges = [exchange for c in received for exchange in c.get("exchanges") or []]
    if exchanges:  # only the tools with steps: what the mock sent the client during the call, and its answers
        evidence["exchanges"] = exchanges
    if rounds:
        evidence["unretried_rounds"] = [r.get("answer") for r in rounds]
    if names != [tool] and not (not names and rounds and reported == [tool]):
        raise CheckFailed(f"the mock received {names}; the script made one {tool} call", evidence)
    if reported != (names or [tool]):
        raise CheckFailed(f"the runtime reported {reported}; the mock received {names}", evidence)
    for position, request in enumerate(record.requests or []):
        for answered, item in answered_items(said(request)):
            if answered is not None and bare(answered.name) == tool:
                evidence["model_call"] = position
                evidence["sent"] = _shown(item.native)
                return item, request, evidence
    raise CheckFailed(f"no model call of the turn was sent a result for the {tool} call", evidence)


def _round_of(request: Mapping[str, Any], tool: str) -> bool:
    """Whether `request` is the first round of a call of `tool` that asked the client for input."""
    params = request.get("params")
    return (
        request.get("method") == "tools/call" and isinstance(params, Mapping) and params.get("name") == tool
    )


def image_content(subject: Subject) -> dict[str, Any]:
    """An image result reaches the model as an image of its wire, or as the declared note; never as base64
    text, never dropped."""
    declared(subject, "image")
    item, request, evidence = one_call(subject, "snapshot")
    problem = image_problem(subject, item, request)
    if problem:
        raise CheckFailed(problem, evidence)
    return evidence


def mixed_content(subject: Subject) -> dict[str, Any]:
    """A result of text, an image and text: both texts byte for byte and in order, the image as declared."""
    declared(subject, "image")
    item, request, evidence = one_call(subject, "chart")
    text = visible_text(item)
    first, last = text.find(CAPTION), text.find(SOURCE)
    if first < 0 or last < 0:
        missing = CAPTION if first < 0 else SOURCE
        raise CheckFailed(f"the model was not sent the text block {missing!r} of the chart result", evidence)
    if last < first:
        raise CheckFailed("the chart result's text blocks reached the model out of order", evidence)
    problem = image_problem(subject, item, request, between=(first, last))
    if problem:
        raise CheckFailed(f"the chart result: {problem}", evidence)
    return evidence


def embedded_resource(subject: Subject) -> dict[str, Any]:
    """An embedded text resource: its text byte for byte and its URI reach the model with the result."""
    declared(subject, "resource")
    item, _request, evidence = one_call(subject, "handbook")
    texts = [visible_text(item), *_document_texts(item.native)]
    if not any(RESOURCE_TEXT in text for text in texts):
        raise CheckFailed(
            f"the model was not sent the embedded resource's text byte for byte (sent {texts[0][:160]!r}): hand "
            "it the resource's contents as text, not its JSON, a summary or its URI alone",
            evidence,
        )
    if RESOURCE_URI not in json.dumps(item.native, ensure_ascii=False):
        raise CheckFailed(
            f"the model was sent the resource's text without its URI {RESOURCE_URI!r}", evidence
        )
    return evidence


def audio_content(subject: Subject) -> dict[str, Any]:
    """An audio result reaches the model as audio of its wire (Chat `input_audio`), or as a note naming
    its MIME type; never as base64 text, never dropped."""
    declared(subject, "audio")
    item, request, evidence = one_call(subject, "recording")
    text = visible_text(item)
    if WAV_B64 in text:
        raise CheckFailed(
            "the audio reached the model as its base64 text, not as audio (or a note)", evidence
        )
    if WAV in native_audio([request.get("messages"), request.get("history")]):
        return evidence
    if WAV_TYPE not in text:
        raise CheckFailed(
            f"the audio was dropped: the model was sent no audio part with the served bytes, and the result's "
            f"text does not name it ({WAV_TYPE})",
            evidence,
        )
    return evidence


def resource_link(subject: Subject) -> dict[str, Any]:
    """A resource link's URI and name reach the model with the result."""
    declared(subject, "resource_link")
    item, _request, evidence = one_call(subject, "ledger")
    sent = json.dumps(item.native, ensure_ascii=False)
    for what, value in (("URI", LINK_URI), ("name", LINK_NAME)):
        if value not in sent:
            raise CheckFailed(f"the model was not sent the resource link's {what} {value!r}", evidence)
    return evidence


def native_audio(value: Any) -> list[bytes]:
    """The bytes of every Chat Completions `input_audio` part in `value` (the one wire with an audio part)."""
    if isinstance(value, list):
        return [found for inner in value for found in native_audio(inner)]
    if not isinstance(value, Mapping):
        return []
    found = [found for inner in value.values() for found in native_audio(inner)]
    inner = value.get("input_audio")
    if value.get("type") == "input_audio" and isinstance(inner, Mapping):
        decoded = _decoded(WAV_TYPE, inner.get("data"))
        found += [decoded[1]] if decoded is not None else []
    return found


def resources(subject: Subject) -> dict[str, Any]:
    """A server's resources reach the model as `[mcp] resources` declares: "context", the text of each
    resource the server lists, byte for byte, in the model's first call of a turn."""
    policy = subject.mcp.resources
    if policy != "context":
        declaration = "declares no resources policy" if policy is None else f'declares resources = "{policy}"'
        raise OptionalAbsent(
            f"{declaration} ([mcp] resources in runtime.toml): not measured", {"declared": policy}
        )
    with subject.scripted([say(DONE)], name="mcp_client-resources", pack=media_pack()) as session:
        subject.needs_model_evidence(session)
        record = session.turn("Answer from the refund policy.", "wt-kit-mcp-client-resources")
        read = [r.get("params") for r in mcp_requests(session.mcps) if r.get("method") == "resources/read"]
    first = (record.requests or [{}])[0]
    evidence: dict[str, Any] = {"offered": [POLICY_URI], "read": read, "sent": _shown(first)}
    if not any(isinstance(params, Mapping) and params.get("uri") == POLICY_URI for params in read):
        raise CheckFailed(
            f"the runtime never read the server's resource {POLICY_URI} (resources/read)", evidence
        )
    if not any(POLICY_TEXT in text for text in _strings(first)):
        raise CheckFailed(
            "the turn's first model call was not sent the resource's text byte for byte", evidence
        )
    return evidence


def _strings(value: Any) -> list[str]:
    """Every string inside `value` (a model call as logged), as sent."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        value = list(value.values())
    return [text for inner in value for text in _strings(inner)] if isinstance(value, list) else []


def image_problem(
    subject: Subject, item: Said, request: Mapping[str, Any], *, between: tuple[int, int] | None = None
) -> str | None:
    """Why the image did not reach the model as declared; None when it did."""
    text = visible_text(item)
    if PNG_B64 in text:
        return "the image reached the model as its base64 text, not as an image (or a declared note)"
    conversation = [request.get("messages"), request.get("history")]
    if any(found == (PNG_TYPE, PNG) for found in native_images(conversation, subject.wire)):
        return None
    if subject.mcp.image == "native":
        return (
            f"the model call was sent no image with the served bytes as {NATIVE_IMAGE.get(subject.wire)} of the "
            f'{subject.wire} wire; a wire whose tool results hold no image declares image = "note" under [mcp]'
        )
    at = text.find(PNG_TYPE)
    if at < 0:
        return f"the image was dropped: the result's text does not name it ({PNG_TYPE}), as the declared note must"
    if between is not None and not between[0] < at < between[1]:
        return "the image's note is not between the texts around it in the result"
    return None


def visible_text(item: Said) -> str:
    """The text parts of a tool result item as sent (a string content, or each part's `text`)."""
    native = item.native if isinstance(item.native, Mapping) else {}
    return text_parts_of(native.get("content", native.get("output")))


def native_images(value: Any, wire: str) -> list[tuple[str, bytes]]:
    """(MIME type, bytes) of every image in `value` spelt as the wire spells one."""
    found: list[tuple[str, bytes]] = []
    if isinstance(value, Mapping):
        image = _image(value, wire)
        if image is not None:
            found.append(image)
        values: Sequence[Any] = list(value.values())
    elif isinstance(value, list):
        values = value
    else:
        return found
    for inner in values:
        found += native_images(inner, wire)
    return found


def _image(part: Mapping[str, Any], wire: str) -> tuple[str, bytes] | None:
    kind = part.get("type")
    if wire == "messages" and kind == "image":
        source = part.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            return _decoded(str(source.get("media_type")), source.get("data"))
    url: Any = None
    if wire == "chat" and kind == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, Mapping) else inner
    if wire == "responses" and kind == "input_image":
        url = part.get("image_url")
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, data = url[len("data:") :].split(";base64,", 1)
        return _decoded(mime, data)
    return None


def _decoded(mime: str, data: Any) -> tuple[str, bytes] | None:
    try:
        return mime, base64.b64decode(str(data), validate=True)
    except ValueError:
        return None


def _document_texts(native: Any) -> list[str]:
    """The text sources of Messages document blocks in a tool result (a native form of a text resource)."""
    if not isinstance(native, Mapping) or not isinstance(native.get("content"), list):
        return []
    return [
        str(block["source"].get("data"))
        for block in native["content"]
        if isinstance(block, Mapping)
        and block.get("type") == "document"
        and isinstance(block.get("source"), Mapping)
        and block["source"].get("type") == "text"
    ]


def _shown(value: Any) -> Any:
    """`value` for the evidence, the image's base64 shortened (its bytes are the pack's, named by length)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return json.loads(text.replace(PNG_B64, f"<{len(PNG)} bytes of image/png, base64>"))


MCP_CLIENT_CHECKS = (
    ("image_content", "an image result reaches the model as an image, or the declared note", image_content),
    ("mixed_content", "text, image, text: each part reaches the model, in order", mixed_content),
    ("embedded_resource", "an embedded resource's text and URI reach the model", embedded_resource),
    ("audio_content", "an audio result reaches the model as audio, or a note", audio_content),
    ("resource_link", "a resource link's URI and name reach the model", resource_link),
    ("resources", "a server's resources reach the model as declared", resources),
)
