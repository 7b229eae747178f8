"""runtime.toml as a versioned pydantic model: every key, its type, its range, what it must be and an example.

One file's own keys only; windtunnel._runtimes.manifest follows `extends` and merges a variant over the
runtime it varies. A key left out is None here, so a variant inherits it.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import field_validator

from windtunnel._configfile import Strict, names_in, reasons_for, spec
from windtunnel._runtimes.fault_policy import FaultsTable
from windtunnel._runtimes.mcp_client import McpTable

SCHEMA_VERSION = 1
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
"""A runtime's name names its image, its evidence directory and its checks: letters, digits, `.`, `_`, `-`."""
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KIND_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
CONTRACT_C_ENV = frozenset(
    {
        "WT_MODEL_BASE_URL",
        "WT_MODEL_ROOT_URL",
        "WT_MODEL_WIRE",
        "WT_MODEL_NAME",
        "WT_MCP_SERVERS",
        "WT_SYSTEM_PROMPT",
        "WT_SAMPLING",
        "WT_INJECT_PORT",
    }
)
"""The variables Contract C hands a runtime (docs/contract-c.md): what `[env] rename` may rename."""
WIRES = ("chat", "messages", "responses")
"""The model wire formats a runtime may speak ([model] wire, WT_MODEL_WIRE): OpenAI Chat Completions,
Anthropic Messages, OpenAI Responses (docs/contract-c.md)."""
DEFAULT_WIRE = "chat"
PLUGIN_PATTERN = r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$"
CONFIG_FIELDS = frozenset(
    {
        "system_prompt",
        "persona_doc",
        "skills",
        "mcp_servers",
        "model.name",
        "model.quant",
        "sampling.temperature",
        "sampling.top_p",
        "sampling.tool_choice",
        "sampling.max_tokens",
    }
)
"""The AgentConfig fields a runtime may declare it honours ([config] supported), or knowingly cannot
honour, with the reason ([config] unsupported)."""

_STRINGS = 'a table of NAME = "value" strings'


class ImageTable(Strict):
    build: str | None = spec(
        expect="a directory relative to runtime.toml, as a string",
        example='build = "." under [image]',
        min_length=1,
    )
    dockerfile: str | None = spec(
        expect="a file relative to [image] build, or windtunnel:python-runtime",
        example='dockerfile = "Dockerfile" under [image]',
        min_length=1,
    )
    requirements: str | None = spec(
        expect="a requirements file relative to runtime.toml",
        example='requirements = "requirements.txt" under [image]',
        min_length=1,
    )
    packages: list[str] | None = spec(
        expect="a list of directories",
        example='packages = ["windtunnel:windtunnel-inject"] under [image] (or directories relative to '
        "runtime.toml)",
    )
    args: dict[str, str] | None = spec(
        expect=_STRINGS, example='args = { RUNTIME_PACKAGE = "my_runtime" } under [image]'
    )
    npm: list[str] | None = spec(
        expect='a list of exact npm pins, "name@1.2.3"',
        example='npm = ["@openai/codex@0.171.0-linux-x64"] under [image]',
    )
    ref: str | None = spec(
        expect="an image reference", example='ref = "registry/agent:1.2" under [image]', min_length=1
    )

    @field_validator("args")
    @classmethod
    def _no_base_image(cls, args: dict[str, str] | None) -> dict[str, str] | None:
        if args and "BASE_IMAGE" in args:
            raise ValueError(
                "BASE_IMAGE is set by Wind Tunnel (the base image it bootstraps, or WT_BASE_IMAGE): drop it "
                "from [image] args; set WT_BASE_IMAGE to build on another base image"
            )
        return args

    @field_validator("npm")
    @classmethod
    def _pinned(cls, specs: list[str] | None) -> list[str] | None:
        loose = [entry for entry in specs or () if not _NPM_PIN.match(entry)]
        if loose:
            raise ValueError(
                f'{", ".join(map(repr, loose))} is not pinned: write each entry as "name@1.2.3" (an exact '
                "version; `npm view NAME version` shows the newest)"
            )
        return specs


_NPM_PIN = re.compile(r"^(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*@\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
"""An npm package at an exact version (scope optional, a prerelease-style suffix allowed): no range, no tag."""


class EnvTable(Strict):
    rename: dict[str, str] | None = spec(
        expect='a table of WT_NAME = "YOUR_NAME" variable names',
        example='rename = { WT_MODEL_BASE_URL = "OPENAI_BASE_URL" } under [env]',
    )
    set: dict[str, str] | None = spec(expect=_STRINGS, example='set = { MY_FLAG = "1" } under [env]')

    @field_validator("rename", "set")
    @classmethod
    def _names(cls, table: dict[str, str] | None) -> dict[str, str] | None:
        for key, value in (table or {}).items():
            if not ENV_NAME.fullmatch(key):
                raise ValueError(f"{key!r} is not an environment variable name (letters, digits, _)")
            if "\0" in value:
                raise ValueError(f"the value of {key} holds a NUL character, which no environment can carry")
        return table

    @field_validator("rename")
    @classmethod
    def _renamed_to_names(cls, table: dict[str, str] | None) -> dict[str, str] | None:
        bad = [value for value in (table or {}).values() if not ENV_NAME.fullmatch(value)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not an environment variable name (letters, digits, _)")
        return table


class ConfigTable(Strict):
    supported: Annotated[list[str] | None, names_in(sorted(CONFIG_FIELDS), "field")] = spec(
        expect=f"a list of AgentConfig field names ({', '.join(sorted(CONFIG_FIELDS))})",
        example='supported = ["system_prompt", "mcp_servers", "model.name"] under [config]',
    )
    unsupported: Annotated[
        dict[str, str] | None, reasons_for(sorted(CONFIG_FIELDS), "field", "why the runtime cannot honour it")
    ] = spec(
        expect='a table of AgentConfig field name = "why the runtime cannot honour it"',
        example='unsupported = { "sampling.top_p" = "its SDK sends no top_p" } under [config]',
    )


class CapabilitiesTable(Strict):
    reference: bool | None = spec(
        expect="true or false (a TOML boolean, not a string)", example="reference = true under [capabilities]"
    )
    state_route: str | None = spec(
        expect='a path starting with "/"',
        example='state_route = "/wt/state" under [capabilities]',
        pattern=r"^/\S*$",
    )
    port: int | None = spec(
        expect="an integer 1-65535", example="port = 8647 under [capabilities]", ge=1, le=65535
    )


class DriverTable(Strict):
    kind: str | None = spec(
        expect="the name of a driver kind registered under the windtunnel.drivers entry-point group",
        example='kind = "container" under [driver] (or leave it out: python with plugin=, else container)',
        pattern=KIND_PATTERN,
    )
    plugin: str | None = spec(
        expect="a module:attr path", example='plugin = "driver:plugin" under [driver]', pattern=PLUGIN_PATTERN
    )


class ModelTable(Strict):
    wire: Literal["chat", "messages", "responses"] | None = spec(
        expect=f"one of {', '.join(repr(w) for w in WIRES)} (the API the runtime's model calls speak)",
        example='wire = "messages" under [model] (or leave it out: chat)',
    )
    side_models: list[str] | None = spec(
        expect="a list of model names the runtime's side calls (titles, summaries, token counts) use",
        example='side_models = ["claude-haiku-4-5"] under [model]',
    )

    @field_validator("side_models")
    @classmethod
    def _side_names(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            if not name.strip() or name != name.strip():
                raise ValueError(f"{name!r} is not a model name (empty, or spaces around it)")
        if names and len(set(names)) != len(names):
            twice = next(name for name in names if names.count(name) > 1)
            raise ValueError(f"names {twice!r} twice; name each side model once")
        return names


class RuntimeToml(Strict):
    """One runtime.toml file, as written (see windtunnel._runtimes.manifest for what each key means)."""

    schema_version: Literal[1] | None = spec(
        expect=f"{SCHEMA_VERSION} (the only runtime.toml version)",
        example=f"schema_version = {SCHEMA_VERSION}, or leave it out",
    )
    name: str | None = spec(
        expect="a name of letters, digits, '.', '_' and '-' (at most 63)",
        example='name = "my-runtime"',
        pattern=NAME_PATTERN,
    )
    extends: str | None = spec(
        expect="the directory (or runtime.toml) of the runtime this one varies",
        example='extends = "../.."',
        min_length=1,
    )
    description: str | None = spec(expect="a string", example='description = "what this runtime is"')
    image: ImageTable = spec(ImageTable(), expect="a table", example='[image] with build = "." under it')
    env: EnvTable = spec(EnvTable(), expect="a table", example="[env] with rename = { ... } under it")
    config: ConfigTable = spec(ConfigTable(), expect="a table", example="[config] with supported = [...]")
    capabilities: CapabilitiesTable = spec(
        CapabilitiesTable(), expect="a table", example="[capabilities] with reference = true under it"
    )
    driver: DriverTable = spec(DriverTable(), expect="a table", example='[driver] with plugin = "m:attr"')
    model: ModelTable = spec(
        ModelTable(), expect="a table", example='[model] with wire = "messages" under it'
    )
    faults: FaultsTable | None = spec(
        expect="a table (windtunnel._runtimes.fault_policy)", example="[faults] with retries = 2 under it"
    )
    mcp: McpTable | None = spec(
        expect="a table (windtunnel._runtimes.mcp_client)", example='[mcp] with content = ["image"] under it'
    )
