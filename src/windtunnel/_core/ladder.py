"""The model ladder: `[tool.windtunnel.ladder] models = [...]`, the model labels evidence may come from.

A runtime plugin's `model_label()` names the model it answers with, as an opaque label, or None when it
does not know (never guessed). Before any run starts, every verb that drives a runtime checks that label
against the ladder: a label not listed stops the command with one error naming the label, the list and
the fix. An unknown label (None) is allowed unless `allow_unknown = false`: it is recorded as unknown
(null) in traces, scores, the run ledger and the bundle, so its evidence is never placed on a rung, and it
is never priced. With no ladder configured, every label is accepted and recorded as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.errors import ConfigFileError

LADDER_KEYS = ("models", "allow_unknown")
LADDER_HINT = (
    '[tool.windtunnel.ladder] models = ["label-a", "label-b"] (allow_unknown = true|false is optional)'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ladder:
    models: tuple[str, ...]
    allow_unknown: bool = True
    source: str = "[tool.windtunnel.ladder]"

    def check(self, runtime: str, label: str | None) -> None:
        """Raise ConfigFileError when the runtime's model label is not allowed by the ladder."""
        listed = ", ".join(self.models) or "none"
        if label is None:
            if self.allow_unknown:
                return
            raise ConfigFileError(
                f"runtime {runtime!r} does not state its model (model_label() is None), and the model ladder "
                f"in {self.source} does not allow an unknown model (allow_unknown = false); listed: {listed}",
                hint="make the runtime plugin's model_label() return its model's label, or set "
                "allow_unknown = true in [tool.windtunnel.ladder]",
                field="ladder.allow_unknown",
                runtime=runtime,
            )
        if label not in self.models:
            raise ConfigFileError(
                f"runtime {runtime!r} answers with model {label!r}, which the model ladder in {self.source} "
                f"does not list; listed: {listed}",
                hint=f'add "{label}" to [tool.windtunnel.ladder] models, or run a runtime whose model is listed',
                field="ladder.models",
                runtime=runtime,
                model_label=label,
            )


def check_model(ladder: Ladder | None, runtime: str, label: str | None) -> None:
    """The one rule: with no ladder configured every label (None included) is accepted as it is."""
    if ladder is not None:
        ladder.check(runtime, label)


def parse_ladder(value: Any, where: str, path: Path) -> Ladder:
    """The `ladder` table of the config; a bad one is one clear error naming the field."""
    if not isinstance(value, Mapping):
        raise _error(where, path, "ladder", f"ladder must be a table, found {value!r}")
    unknown = sorted(set(value) - set(LADDER_KEYS))
    if unknown:
        raise _error(
            where, path, "ladder", f"ladder has unknown key {unknown[0]!r}; known: {', '.join(LADDER_KEYS)}"
        )
    models = value.get("models")
    if isinstance(models, Mapping):
        raise _error(
            where, path, "ladder.models", "ladder.models is a table; it must be a list of model labels"
        )
    if not isinstance(models, list) or not all(isinstance(item, str) and item for item in models):
        raise _error(
            where, path, "ladder.models", f"ladder.models must be a list of model labels, found {models!r}"
        )
    allow = value.get("allow_unknown", True)
    if not isinstance(allow, bool):
        raise _error(
            where,
            path,
            "ladder.allow_unknown",
            f"ladder.allow_unknown must be true or false, found {allow!r}",
        )
    return Ladder(models=tuple(models), allow_unknown=allow, source=where)


def _error(where: str, path: Path, field: str, message: str) -> ConfigFileError:
    return ConfigFileError(f"{where}: {message}", hint=f"write {LADDER_HINT}", path=str(path), field=field)
