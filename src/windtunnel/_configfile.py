"""TOML configuration read through pydantic models: each error is one line naming the file, field, value and fix.

Every configuration file (runtime.toml, windtunnel.toml, `[tool.windtunnel]` of pyproject.toml) is read by
`read_toml` and checked by `validated` against a `Strict` model: unknown keys are refused (with the closest
known key suggested), types are strict (`"false"` is no boolean, `8647.9` no port), numbers have ranges.
A field declares what it expects and an example with `spec(...)`, so the error says

    runtimes/x/runtime.toml: capabilities.port = "eighty": must be an integer 1-65535
      how to fix: write port = 8647 under [capabilities]
"""

from __future__ import annotations

import difflib
import json
import math
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from windtunnel.errors import ConfigFileError

M = TypeVar("M", bound=BaseModel)

_SHOWN_VALUE = 60
"""Longer values are cut in messages: a message stays one line."""


class Strict(BaseModel):
    """A configuration table: unknown keys refused, no type coercion, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def spec(default: Any = None, *, expect: str, example: str, **constraints: Any) -> Any:
    """A field with what it must be (`expect`, after "must be") and a line that would be right (`example`)."""
    return Field(default, json_schema_extra={"expect": expect, "example": example}, **constraints)


def names_in(known: Sequence[str], what: str) -> AfterValidator:
    """A field's validator (`Annotated[list[str] | None, names_in(...)]`): each name must be one of `known`;
    the first that is not is a ValueError naming it, the closest known one suggested."""

    def check(names: Sequence[str] | None) -> Sequence[str] | None:
        _known_names(names, known, what)
        return names

    return AfterValidator(check)


def reasons_for(known: Sequence[str], what: str, why: str) -> AfterValidator:
    """A field's validator for a `name = "reason"` table: each name one of `known` (as `names_in`), each
    given a reason (`why` says what the reason must tell)."""

    def check(table: Mapping[str, str] | None) -> Mapping[str, str] | None:
        _known_names(list(table or {}), known, what)
        for name, reason in (table or {}).items():
            if not reason.strip():
                raise ValueError(f"gives {name} no reason: say {why}")
        return table

    return AfterValidator(check)


def _known_names(names: Sequence[str] | None, known: Sequence[str], what: str) -> None:
    for name in names or ():
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            guess = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"names unknown {what} {name!r}{guess} known: {', '.join(known)}")


def shown(path: Path) -> str:
    """`path` as a message shows it: relative to the working directory when it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def read_toml(path: Path, *, where: str | None = None) -> dict[str, Any]:
    """The TOML document at `path`; unreadable, non-UTF-8 or invalid TOML is a one-line ConfigFileError."""
    name = where or shown(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigFileError(
            f"{name}: cannot be read: {exc.strerror or exc}",
            hint="make it a readable file",
            path=str(path),
        ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigFileError(
            f"{name}: is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line})",
            hint="save the file as UTF-8 (TOML files must be UTF-8)",
            path=str(path),
        ) from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(
            f"{name}: is not valid TOML: {exc}", hint="fix the syntax at the line shown", path=str(path)
        ) from exc


def validated(model: type[M], data: Mapping[str, Any], path: Path, *, where: str | None = None) -> M:
    """`data` as `model`; the first problem becomes a one-line ConfigFileError (see the module docstring).
    `where` names the file in messages (default: the path as `shown`)."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise config_error(model, exc, path, where=where or shown(path)) from None


def config_error(model: type[BaseModel], exc: ValidationError, path: Path, *, where: str) -> ConfigFileError:
    """The first error of `exc` as one line: file, field, value, what it must be; the fix as the hint."""
    error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    dotted = dotted_name(loc)
    if error["type"] == "extra_forbidden":
        return _unknown_key(model, loc, error.get("input"), path, where)
    info = _field_at(model, loc)
    extra = info.json_schema_extra if info is not None and isinstance(info.json_schema_extra, dict) else {}
    example = extra.get("example")
    hint = f"write {example}" if example else "fix the value"
    if error["type"] == "missing":
        return ConfigFileError(f"{where}: {dotted} is missing", hint=hint, path=str(path), field=dotted)
    value = toml_value(error.get("input"))
    if error["type"] in {"value_error", "assertion_error"}:
        problem = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    elif extra.get("expect"):
        problem = f"must be {extra['expect']}"
    else:
        problem = str(error["msg"]).lower()
    return ConfigFileError(f"{where}: {dotted} = {value}: {problem}", hint=hint, path=str(path), field=dotted)


def dotted_name(loc: tuple[Any, ...]) -> str:
    """`("runtimes", 0, "build")` -> `runtimes[0].build`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def toml_value(value: Any) -> str:
    """`value` as a TOML file writes it (strings quoted, inf and nan bare), cut to fit one line."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    elif isinstance(value, dict):
        text = "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(toml_value(item) for item in value) + "]"
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 3] + "..."


def _unknown_key(
    model: type[BaseModel], loc: tuple[Any, ...], value: Any, path: Path, where: str
) -> ConfigFileError:
    parent = _model_at(model, loc[:-1])
    key = str(loc[-1])
    known = list(parent.model_fields) if parent is not None else []
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    table = isinstance(value, dict) and not loc[:-1]  # a top-level table; inside one, a key = { ... }
    inside = f" in [{dotted_name(loc[:-1])}]" if loc[:-1] else ""
    what = f"unknown table [{dotted_name(loc)}]" if table and not inside else f"unknown key {key!r}{inside}"
    suggestion = (f"[{dotted_name((*loc[:-1], close[0]))}]" if table else repr(close[0])) if close else ""
    guess = f"; did you mean {suggestion}?" if close else ";"
    return ConfigFileError(
        f"{where}: {what}{guess} known keys: {', '.join(known) or 'none'}",
        hint=f"rename it to {suggestion}" if close else "fix the spelling or remove the key",
        path=str(path),
        field=key,
    )


def _field_at(model: type[BaseModel], loc: tuple[Any, ...]) -> FieldInfo | None:
    """The field `loc` points into (a dict or list field's own info for a key or index inside it)."""
    current: type[BaseModel] | None = model
    info: FieldInfo | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None or part not in current.model_fields:
            return info
        info = current.model_fields[part]
        current = _model_of(info.annotation)
    return info


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    if not loc:
        return model
    info = _field_at(model, loc)
    return _model_of(info.annotation) if info is not None else None


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class inside `annotation` (X, X | None, list[X]), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) in (typing.Union, list):
        for argument in typing.get_args(annotation):
            found = _model_of(argument)
            if found is not None:
                return found
    return None
