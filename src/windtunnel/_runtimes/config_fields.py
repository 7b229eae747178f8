"""Which AgentConfig fields a caller set, and refusing the ones a runtime cannot honour (docs/conformance.md#unsupported_config)."""

from __future__ import annotations

from windtunnel._core.agent_runtime import AgentConfig
from windtunnel.errors import UnsupportedConfigError


def refuse_fields(config: AgentConfig, supported: frozenset[str], runtime: str) -> None:
    """Raise UnsupportedConfigError for every set field of `config` outside `supported`."""
    requested = set_fields(config)
    refused = sorted(requested - supported)
    if refused:
        raise UnsupportedConfigError(
            f"{runtime} cannot honour {', '.join(refused)}",
            hint=f"leave them unset, or use a runtime that supports them (supported here: {sorted(supported) or 'none'})",
            runtime=runtime,
            field=refused[0],
        )


def set_fields(config: AgentConfig) -> set[str]:
    """The AgentConfig fields a caller set, as dotted names (sampling.temperature, extensions.KEY...)."""
    fields = {name for name in ("system_prompt", "persona_doc", "model") if getattr(config, name) is not None}
    if config.skills:
        fields.add("skills")
    if config.model is not None:
        fields.add("model.name")
        if config.model.quant is not None:
            fields.add("model.quant")
        fields.discard("model")
    fields |= {f"sampling.{key}" for key in config.sampling.as_dict()}
    fields |= {f"extensions.{key}" for key in config.extensions}
    return fields
