"""JSON schemas of every serialised artefact, generated from the pydantic models and checked in.

Regenerate with `python -m windtunnel._schemas`; a test fails when a checked-in schema is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from windtunnel._bundle.shard_models import MergeInfo, ShardInfo, ShardPlan
from windtunnel._conversation.model import Conversation
from windtunnel._score.models import Score
from windtunnel._tapes.model import Interaction, TapeHeader
from windtunnel._trace.models import Trace

SCHEMA_DIR = Path(__file__).parent / "schemas"
MODELS: dict[str, type[BaseModel]] = {
    "trace": Trace,
    "score": Score,
    "tape-header": TapeHeader,
    "tape-interaction": Interaction,
    "conversation": Conversation,
    "plan": ShardPlan,
    "shard": ShardInfo,
    "merge": MergeInfo,
}
VERSIONED_BY: dict[str, str] = {"tape-interaction": "tape-header"}
"""Models that are lines of a file whose header line carries the schema_version (a tape's interactions)."""


def register(name: str, model: type[BaseModel]) -> None:
    """Add a model from another module (tapes, bundle files) to the checked-in set."""
    MODELS[name] = model


def render(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(mode="serialization"), indent=2, sort_keys=True) + "\n"


def stale() -> list[str]:
    """Names whose checked-in schema differs from the model."""
    return [
        name
        for name, model in MODELS.items()
        if not (SCHEMA_DIR / f"{name}.schema.json").is_file()
        or (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8") != render(model)
    ]


def write_all() -> list[Path]:
    SCHEMA_DIR.mkdir(exist_ok=True)
    paths = []
    for name, model in MODELS.items():
        path = SCHEMA_DIR / f"{name}.schema.json"
        path.write_text(render(model), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all():
        sys.stdout.write(f"wrote {written}\n")
