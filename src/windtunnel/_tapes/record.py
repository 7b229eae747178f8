"""Record mode: proxy every model call to its upstream, in its dialect, and write what it answered to a tape.

The runtime gets exactly what the tape keeps (secrets redacted), so a recorded run and its replay see the
same answers. The API key goes only into the upstream request's auth header (Anthropic's `x-api-key` for the
Messages dialect, `Authorization: Bearer` otherwise); it is redacted wherever it appears and scanned for
before writing and after reloading. A stream's events are kept whatever its dialect (each carries its
`type`); a chat stream ends at `data: [DONE]`, the others when the upstream closes them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Collection, Iterable, Mapping
from pathlib import Path

import httpx

from windtunnel._chat.mode import ChatRequest, ModeReply
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.checks import fingerprint_problems
from windtunnel._tapes.errors import TapeCorrupt
from windtunnel._tapes.fingerprint import normalize_upstream
from windtunnel._tapes.model import Interaction, RecordedResponse, Tape
from windtunnel._tapes.policy import Clock, utcnow
from windtunnel._tapes.replay import reply_for
from windtunnel._tapes.store import write_tape
from windtunnel._tapes.stream import DONE, parse_event, sse_data

RESPONSE_HEADERS: frozenset[str] = frozenset({"content-type", "openai-model", "openai-version"})
"""Upstream response headers kept on tape by default; every other header is dropped."""

NEVER_KEPT: frozenset[str] = frozenset({"authorization", "api-key", "x-api-key", "cookie", "set-cookie"})
"""Headers never stored or forwarded from the client, whatever the allowlists say."""

UPSTREAM_FAILED = 502


class RecordMode:
    """A GatewayMode that proxies to `upstream` (an OpenAI-compatible base URL, usually ending in /v1).

    finish() writes the tape atomically, reloads it and re-checks secrets and fingerprints; it raises
    TapeNotRecorded when no interaction was recorded. aclose() closes the client and finishes once.
    `lineage` names the recorded run (runtime, pack, scenario) on the tape, so promotion can tie a score to it.
    """

    name = "record"

    def __init__(
        self,
        *,
        upstream: str,
        api_key: str | None,
        tape_path: Path,
        tape_name: str | None = None,
        source_run: str | None = None,
        response_headers: Collection[str] = RESPONSE_HEADERS,
        request_headers: Collection[str] = (),
        extra_secrets: Iterable[str] = (),
        timeout: float = 120.0,
        clock: Clock = utcnow,
        lineage: Mapping[str, str | None] | None = None,
    ) -> None:
        self.upstream_url = upstream.rstrip("/")
        self.upstream = normalize_upstream(upstream)
        self.tape_path = tape_path
        self.tape_name = tape_name or tape_path.stem
        self._response_headers = {h.lower() for h in response_headers} - NEVER_KEPT
        self._request_headers = {h.lower() for h in request_headers} - NEVER_KEPT
        self.builder = TapeBuilder(
            self.tape_name,
            upstream=upstream,
            source_run=source_run,
            known_secrets=(api_key or "", *extra_secrets),
            clock=clock,
            lineage=lineage,
        )
        self._known = self.builder.known_secrets
        self._scanner = self.builder.scanner
        self._key = api_key or None
        self._client = httpx.AsyncClient(timeout=timeout)
        self._tape: Tape | None = None
        self._closed = False

    def forward_url(self, path: str) -> str:
        """The gateway serves /v1/...; the upstream base URL already ends at its own API root."""
        return self.upstream_url + (path[3:] if path.startswith("/v1/") else path)

    @property
    def written(self) -> Tape | None:
        """The tape once finish() wrote it (the gateway's POST /wt/tape/flush), else None."""
        return self._tape

    async def complete(self, request: ChatRequest) -> ModeReply:
        if self._tape is not None:
            # A call after the tape was written would be answered but never recorded: refuse it instead.
            return ModeReply(
                status=409,
                error=f"record mode: the tape {self.tape_path} was already written with "
                f"{len(self._tape.interactions)} interaction(s); this call would not be recorded",
                error_code="tape_already_written",
            )
        url = self.forward_url(request.path)
        headers = {
            **self._forwarded(request.headers),
            "content-type": "application/json",
            **self._auth(request),
        }
        try:
            response = await self._call(url, request, headers)
        except (httpx.HTTPError, ValueError) as exc:
            # Nothing is recorded for a call the upstream never answered properly.
            reason = self._scanner.redact_text(f"{type(exc).__name__}: {exc}")
            return ModeReply(
                status=UPSTREAM_FAILED,
                error=f"record mode: upstream {self.upstream} failed: {reason}",
                error_code="upstream_unreachable",
            )
        headers_kept = self._stored(request.headers)
        interaction = self.builder.add(
            request.method, request.path, request.body, response, headers=headers_kept
        )
        return reply_for(interaction, tape=str(self.tape_path))

    def _auth(self, request: ChatRequest) -> dict[str, str]:
        if self._key is None:
            return {}
        if request.wire == "anthropic-messages":
            return {"x-api-key": self._key}
        return {"authorization": f"Bearer {self._key}"}

    async def _call(self, url: str, request: ChatRequest, headers: dict[str, str]) -> RecordedResponse:
        async with self._client.stream(
            request.method, url, json=dict(request.body), headers=headers
        ) as reply:
            kept = {k.lower(): v for k, v in reply.headers.items() if k.lower() in self._response_headers}
            is_sse = reply.headers.get("content-type", "").startswith("text/event-stream")
            if request.stream and is_sse and reply.status_code < 400:
                events = [parse_event(data) async for data in _sse_payloads(reply)]
                return RecordedResponse(status=reply.status_code, events=events, headers=kept)
            raw = await reply.aread()
        body = json.loads(raw) if raw.strip() else {}
        return RecordedResponse(status=reply.status_code, body=body, headers=kept)

    def _forwarded(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in headers.items() if k.lower() in self._request_headers}

    def _stored(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {k.lower(): v for k, v in headers.items() if k.lower() in self._request_headers}

    @property
    def interactions(self) -> list[Interaction]:
        return self.builder.interactions

    def build_tape(self) -> Tape:
        """The tape recorded so far, in memory; raises TapeNotRecorded when there is nothing in it."""
        return self.builder.build()

    def finish(self) -> Tape:
        """Write the tape atomically, reload it, re-check secrets and fingerprints; return the reloaded tape."""
        if self._tape is not None:
            return self._tape
        written = write_tape(self.build_tape(), self.tape_path, known_secrets=self._known)
        problems = fingerprint_problems(written)
        if problems:
            raise TapeCorrupt(
                f"tape {self.tape_path} failed its check after writing: {problems[0]}",
                hint="this is a Wind Tunnel bug; report it with the tape",
                tape=str(self.tape_path),
                line=None,
            )
        self._tape = written
        return written

    async def abort(self) -> None:
        """Close the upstream client and write nothing (a partial recording must not become a tape)."""
        self._closed = True
        await self._client.aclose()

    async def aclose(self) -> None:
        """Close the upstream client, then finish once (raises TapeNotRecorded for an empty record run)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._client.aclose()
        finally:
            self.finish()


async def _sse_payloads(reply: httpx.Response) -> AsyncIterator[str]:
    async for line in reply.aiter_lines():
        data = sse_data(line)
        if data is None or not data:
            continue
        if data == DONE:
            return
        yield data
