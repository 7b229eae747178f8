"""CertifyConfig: everything one certification run needs, immutable, read in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from windtunnel._config import Settings

REFERENCE = "reference"


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class CertifyConfig:
    """`runtimes` are the runtimes to certify; the reference runtime always runs too, as the harness's
    known-good control. `suite_dir` holds requirement sets, poisons and expected failures."""

    runtimes: tuple[str, ...]
    pack_refs: tuple[str, ...]
    root: Path
    out_dir: Path
    suite_dir: Path
    requirement_set: str = "1"
    fail_fast: bool = False
    key_path: Path | None = None
    key_pem: str | None = None
    certification: bool = True
    clock: Callable[[], datetime] = field(default=utc_now)

    @property
    def all_runtimes(self) -> tuple[str, ...]:
        """The reference control first, then the requested runtimes, each once."""
        return tuple(dict.fromkeys((REFERENCE, *self.runtimes)))

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        runtimes: tuple[str, ...],
        out_dir: Path,
        fail_fast: bool = False,
        key_path: Path | None = None,
    ) -> CertifyConfig:
        configured = tuple(entry.name for entry in settings.runtimes)
        return cls(
            runtimes=runtimes or configured or (REFERENCE,),
            pack_refs=settings.packs,
            root=settings.root,
            out_dir=out_dir,
            suite_dir=settings.root / "conformance",
            requirement_set=settings.requirement_set,
            fail_fast=fail_fast,
            key_path=key_path,
            key_pem=settings.env_value("WT_SIGNING_KEY"),
        )
