"""has_ability answers exactly as isinstance() does against a runtime_checkable Protocol."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from windtunnel._core.abilities import has_ability


@runtime_checkable
class _Greets(Protocol):
    def greet(self) -> str: ...


@runtime_checkable
class _Named(Protocol):
    name: str


class _Greeter:
    def greet(self) -> str:
        return "hi"


class _Plain:
    pass


def test_methods_protocol_agrees_with_isinstance() -> None:
    given = _Plain()
    given.greet = lambda: "hi"  # type: ignore[attr-defined]  # an instance attribute supplies the method
    for value in (_Greeter(), _Plain(), given, 3):
        assert has_ability(value, _Greets) == isinstance(value, _Greets)
    assert has_ability(given, _Greets) and not has_ability(_Plain(), _Greets)


def test_data_member_protocol_goes_to_isinstance() -> None:
    named = _Plain()
    named.name = "x"  # type: ignore[attr-defined]
    assert has_ability(named, _Named)
    assert not has_ability(_Plain(), _Named)
    unnamed = _Plain()
    unnamed.name = None  # type: ignore[attr-defined]  # a data member may be None: isinstance() decides
    assert has_ability(unnamed, _Named) == isinstance(unnamed, _Named)


def test_a_method_set_to_none_is_not_the_ability() -> None:
    given = _Greeter()
    given.greet = None  # type: ignore[assignment]
    assert has_ability(given, _Greets) == isinstance(given, _Greets)
