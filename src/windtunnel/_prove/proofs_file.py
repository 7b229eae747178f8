"""The proofs file: JSONL, a header line then one ScenarioProof per line, each made durable as written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Annotated, TextIO

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from windtunnel._prove.models import ProofsHeader, ScenarioProof
from windtunnel.errors import UsageError

_LINE: TypeAdapter[ProofsHeader | ScenarioProof] = TypeAdapter(
    Annotated[ProofsHeader | ScenarioProof, Field(discriminator="record")]
)


class ProofsWriter:
    """Writes records to a fresh proofs file; each line is flushed and fsynced before write() returns,
    so nothing recorded is lost if the process dies right after."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: TextIO | None = None

    def __enter__(self) -> ProofsWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        _fsync_dir(self.path.parent)  # the new directory entry must survive a crash too
        return self

    def write(self, record: BaseModel) -> None:
        if self._file is None:
            raise RuntimeError("ProofsWriter.write() outside its with-block")
        self._file.write(record.model_dump_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _fsync_dir(path: Path) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return  # some platforms cannot open a directory; the file's own fsync still holds its data
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@dataclass(frozen=True, slots=True)
class ProofsFile:
    header: ProofsHeader | None
    proofs: tuple[ScenarioProof, ...]


def read_proofs(path: Path) -> ProofsFile:
    """Read a proofs file. A torn last line (the writer died mid-line) is left out; any other bad line raises."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    header: ProofsHeader | None = None
    proofs: list[ScenarioProof] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = _LINE.validate_json(line)
        except ValidationError as exc:
            if number == len(lines):  # no newline after it: it was never completely written
                break
            raise UsageError(
                f"{path}: line {number} is not a proof record ({exc.errors()[0]['msg']})",
                hint="prove again to rewrite the file; do not edit proofs files by hand",
                path=str(path),
            ) from None
        if isinstance(record, ProofsHeader):
            header = record
        else:
            proofs.append(record)
    return ProofsFile(header, tuple(proofs))
