"""Build a tape in memory, one exchange at a time: redact, fingerprint, number, and write lineage.

Record mode feeds it from a live upstream; tests and benchmarks feed it directly. Either way the same code
decides what a tape stores.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from windtunnel import __version__
from windtunnel._tapes.errors import TapeNotRecorded
from windtunnel._tapes.fingerprint import (
    FINGERPRINT_VERSION,
    VOLATILE_RULES,
    fingerprint,
    normalize_upstream,
    request_parts,
)
from windtunnel._tapes.model import Interaction, Lineage, RecordedRequest, RecordedResponse, Tape, TapeHeader
from windtunnel._tapes.policy import Clock, is_scripted, utcnow
from windtunnel._tapes.secrets import SecretScanner
from windtunnel._wire.registry import CHAT, dialect_for_path


class TapeBuilder:
    """Collects interactions for tape `name` recorded from `upstream`; `known_secrets` are redacted too.

    `lineage` names the run being recorded (Lineage.runtime, pack, scenario): promotion refuses a score
    of any other run.
    """

    def __init__(
        self,
        name: str,
        *,
        upstream: str,
        source_run: str | None = None,
        known_secrets: Iterable[str] = (),
        clock: Clock = utcnow,
        lineage: Mapping[str, str | None] | None = None,
    ) -> None:
        self.name = name
        self.upstream = normalize_upstream(upstream)
        self.source_run = source_run
        self.lineage = dict(lineage or {})
        self.known_secrets = tuple(value for value in known_secrets if value)
        self.scanner = SecretScanner(self.known_secrets)
        self._clock = clock
        self.interactions: list[Interaction] = []

    def add(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any],
        response: RecordedResponse,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Interaction:
        """Store one exchange (request parts allowlisted, everything redacted) and return it."""
        parts = request_parts(method, self.upstream, path, body, scanner=self.scanner)
        request = RecordedRequest(**parts, headers=self.scanner.redact(dict(headers or {})))
        interaction = Interaction(
            seq=len(self.interactions),
            fingerprint=fingerprint(parts),
            recorded_at=self._clock(),
            request=request,
            response=RecordedResponse.model_validate(self.scanner.redact(response.model_dump(mode="json"))),
        )
        self.interactions.append(interaction)
        return interaction

    def build(self) -> Tape:
        """The tape so far; raises TapeNotRecorded when nothing was added (an empty recording is a failure)."""
        if not self.interactions:
            raise TapeNotRecorded(
                f"the record run for tape {self.name!r} recorded no interaction: no model call reached "
                "the gateway in record mode, so there is no tape to write",
                hint="check that the runtime's model base URL points at the gateway (WT_MODEL_BASE_URL), "
                "that the gateway runs in record mode, and that the scenario makes a model call",
                tape=self.name,
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
            runtime=self.lineage.get("runtime") or None,
            pack=self.lineage.get("pack") or None,
            scenario=self.lineage.get("scenario") or None,
            scripted=is_scripted(self.upstream),  # the only place the mark is set
        )
        dialects = {dialect_for_path(i.request.path) for i in self.interactions}
        header = TapeHeader(
            tape=self.name,
            recorded_at=started,
            fingerprint_version=FINGERPRINT_VERSION,
            lineage=lineage,
            volatile_rules=VOLATILE_RULES if dialects - {CHAT} else None,
        )
        return Tape(header=header, interactions=tuple(self.interactions))


def _reported_model(response: RecordedResponse) -> str | None:
    if response.events:
        return next((e.get("model") for e in response.events if e.get("model")), None)
    return response.body.get("model") if isinstance(response.body, Mapping) else None


def _distinct(values: Iterable[Any]) -> list[str]:
    return sorted({str(value) for value in values if value})
