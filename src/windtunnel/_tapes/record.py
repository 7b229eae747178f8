"""Record mode: proxy every model call to an OpenAI-compatible upstream and write what it answered to a tape.

The runtime gets exactly what the tape keeps (secrets redacted), so a recorded run and its replay see the
same answers. The API key goes only into the upstream request's Authorization header; it is redacted
wherever it appears and scanned for before writing and after reloading.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from windtunnel import __version__
from windtunnel._gateway.mode import ChatRequest, ModeReply
from windtunnel._tapes.checks import fingerprint_problems
from windtunnel._tapes.errors import TapeCorrupt, TapeNotRecorded
from windtunnel._tapes.fingerprint import FINGERPRINT_VERSION, fingerprint, normalize_upstream, request_parts
from windtunnel._tapes.model import Interaction, Lineage, RecordedRequest, RecordedResponse, Tape, TapeHeader
from windtunnel._tapes.policy import Clock, utcnow
from windtunnel._tapes.replay import reply_for
from windtunnel._tapes.secrets import SecretScanner
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
    ) -> None:
        self.upstream_url = upstream.rstrip("/")
        self.upstream = normalize_upstream(upstream)
        self.tape_path = tape_path
        self.tape_name = tape_name or tape_path.stem
        self.source_run = source_run
        self._response_headers = {h.lower() for h in response_headers} - NEVER_KEPT
        self._request_headers = {h.lower() for h in request_headers} - NEVER_KEPT
        self._known = tuple(value for value in (api_key, *extra_secrets) if value)
        self._scanner = SecretScanner(self._known)
        self._auth = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout)
        self._clock = clock
        self.interactions: list[Interaction] = []
        self._tape: Tape | None = None
        self._closed = False

    def forward_url(self, path: str) -> str:
        """The gateway serves /v1/...; the upstream base URL already ends at its own API root."""
        return self.upstream_url + (path[3:] if path.startswith("/v1/") else path)

    async def complete(self, request: ChatRequest) -> ModeReply:
        url = self.forward_url(request.path)
        headers = {**self._forwarded(request.headers), "content-type": "application/json", **self._auth}
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
        interaction = self._keep(request, response)
        return reply_for(interaction)

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

    def _keep(self, request: ChatRequest, response: RecordedResponse) -> Interaction:
        parts = self._scanner.redact(request_parts(request.method, self.upstream, request.path, request.body))
        stored = RecordedRequest(**parts, headers=self._scanner.redact(self._stored(request.headers)))
        interaction = Interaction(
            seq=len(self.interactions),
            fingerprint=fingerprint(parts),
            recorded_at=self._clock(),
            request=stored,
            response=RecordedResponse.model_validate(self._scanner.redact(response.model_dump(mode="json"))),
        )
        self.interactions.append(interaction)
        return interaction

    def _forwarded(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in headers.items() if k.lower() in self._request_headers}

    def _stored(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {k.lower(): v for k, v in headers.items() if k.lower() in self._request_headers}

    def build_tape(self) -> Tape:
        """The tape recorded so far, in memory; raises TapeNotRecorded when there is nothing in it."""
        if not self.interactions:
            raise TapeNotRecorded(
                f"the record run for tape {self.tape_path} recorded no interaction: no model call reached "
                "the gateway in record mode, so there is no tape to write",
                hint="check that the runtime's model base URL points at the gateway (WT_MODEL_BASE_URL), "
                "that the gateway runs in record mode, and that the scenario makes a model call",
                tape=str(self.tape_path),
            )
        started = min(i.recorded_at for i in self.interactions)
        lineage = Lineage(
            recorder_version=__version__,
            fingerprint_version=FINGERPRINT_VERSION,
            upstream=self.upstream,
            source_run=self.source_run,
            requested_models=_distinct(i.request.body.get("model") for i in self.interactions),
            reported_models=_distinct(_reported_model(i.response) for i in self.interactions),
            recorded_at=started,
        )
        header = TapeHeader(
            tape=self.tape_name, recorded_at=started, fingerprint_version=FINGERPRINT_VERSION, lineage=lineage
        )
        return Tape(header=header, interactions=tuple(self.interactions))

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


def _reported_model(response: RecordedResponse) -> str | None:
    if response.events:
        return next((e.get("model") for e in response.events if e.get("model")), None)
    return response.body.get("model") if isinstance(response.body, Mapping) else None


def _distinct(values: Iterable[Any]) -> list[str]:
    return sorted({str(value) for value in values if value})
