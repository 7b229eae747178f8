"""Typed doors to the Dagger SDK's decorators, so mypy --strict checks the module with or without dagger-io.

dagger-io 0.21.11 types `function()` without its `cache` keyword (its overloads omit it), and mypy does
not apply `object_type`'s dataclass_transform through the `dagger.object_type` alias; where dagger-io is
not installed (the shared dev venv), every decorator is untyped. These wrappers call the SDK's own
decorators, so registration with the engine is exactly the SDK's.
"""

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

import dagger

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_SDK: Any = dagger  # the implementation accepts what its overloads do not declare (cache=)


def function(*, cache: str | None = None) -> Callable[[F], F]:
    """`@dagger.function`; `cache` is "never", "session" or a TTL such as "10m" (default: 7 days)."""
    decorator: Callable[[F], F] = _SDK.function(cache=cache)
    return decorator


def check(fn: F) -> F:
    """`@dagger.check`: run by `dagger check`; no required arguments."""
    marked: F = _SDK.check(fn)
    return marked


def field(*, default: Any = ..., init: bool = True) -> Any:
    """`dagger.field()`: an attribute exposed in the API."""
    return _SDK.field(default=default, init=init)


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
def object_type(cls: type[T]) -> type[T]:
    """`@dagger.object_type`: a kw-only dataclass registered with the module."""
    made: type[T] = _SDK.object_type(cls)
    return made
