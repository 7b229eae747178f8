"""Every error Wind Tunnel raises, under one root.

    WindTunnelError                 .hint: how to fix it
    ├── UsageError                  bad input from the user; the CLI exits 2
    │   ├── ScenarioError           .scenario .case .decision_index .field
    │   ├── PackError               .pack .path .field
    │   ├── SelectionError          a --scenario/--tag/--pack/--owner that matches nothing
    │   ├── ConfigFileError         .path .field  ([tool.windtunnel], windtunnel.toml, runtime.toml)
    │   └── PluginError             .plugin .entry_point .missing
    │       └── UnknownRuntimeError .runtime
    ├── UnsupportedConfigError      .runtime .field: a runtime refuses a config field it cannot honour
    ├── RuntimeFault                the runtime under test misbehaved during a run (.runtime)
    │   ├── EnvelopeError           .field: a Contract C response broke the envelope
    │   ├── ResetFailedError        reset_state() did not wipe: fatal for the batch
    │   ├── RuntimeTimeoutError     no answer within the deadline
    │   └── RuntimeUnavailableError the runtime went away (killed, refused, crashed)
    ├── IntegrityError              what the runtime reported differs from what the mocks received
    ├── ProbeError                  a StateProbe could not capture state
    ├── GatewayError                the model gateway refused a request (.reason: no_script, script_exhausted...)
    ├── TapeError                   .tape (see windtunnel._tapes for the subclasses)
    ├── HarnessError                Wind Tunnel's own machinery failed (engine, image build, network)
    │   └── EngineUnavailableError  no Docker engine to talk to (.environment: every verb exits 2)
    └── VerificationError           a certification bundle did not verify (.reason)

Each message states what was expected, what was found, and how to fix it. The CLI prints
`str(error)` without a traceback.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "WindTunnelError",
    "UsageError",
    "ScenarioError",
    "PackError",
    "SelectionError",
    "ConfigFileError",
    "PluginError",
    "UnknownRuntimeError",
    "UnsupportedConfigError",
    "RuntimeFault",
    "EnvelopeError",
    "ResetFailedError",
    "RuntimeTimeoutError",
    "RuntimeUnavailableError",
    "IntegrityError",
    "ProbeError",
    "GatewayError",
    "TapeError",
    "HarnessError",
    "EngineUnavailableError",
    "VerificationError",
]


class WindTunnelError(Exception):
    """Root of every Wind Tunnel error. `hint` says how to fix it; keyword context lands as attributes."""

    def __init__(self, message: str, *, hint: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context
        for key, value in context.items():
            setattr(self, key, value)

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  how to fix: {self.hint}"
        return self.message


class UsageError(WindTunnelError):
    """Bad input from the user: a file, a flag, a name. The CLI exits 2."""


class ScenarioError(UsageError):
    """A scenario or one of its reference cases breaks the authoring contract."""


class PackError(UsageError):
    """A scenario pack is malformed or cannot be loaded."""


class SelectionError(UsageError):
    """A selection (--scenario/--tag/--pack/--owner) matched nothing or is malformed."""


class ConfigFileError(UsageError):
    """A configuration file has a bad or missing field."""


class PluginError(UsageError):
    """A runtime plugin could not be loaded or lacks a required method."""


class UnknownRuntimeError(PluginError):
    """No runtime plugin is registered under the requested name."""


class UnsupportedConfigError(WindTunnelError):
    """A runtime was asked to honour a config field it cannot honour; it must raise, never ignore."""


class RuntimeFault(WindTunnelError):
    """The runtime under test misbehaved during a run."""


class EnvelopeError(RuntimeFault):
    """A Contract C response did not match the envelope; `.field` names the bad field."""


class ResetFailedError(RuntimeFault):
    """reset_state() failed: cross-run state may survive, so the batch stops."""


class RuntimeTimeoutError(RuntimeFault):
    """The runtime did not answer within its deadline."""


class RuntimeUnavailableError(RuntimeFault):
    """The runtime went away: connection refused, container killed, process crashed."""


class IntegrityError(WindTunnelError):
    """The tool calls the runtime reported differ from the tool calls the MCP mocks received."""


class ProbeError(WindTunnelError):
    """A StateProbe could not capture the world state."""


class GatewayError(WindTunnelError):
    """The model gateway refused a model call (no script installed, script exhausted, tape error)."""


class TapeError(WindTunnelError):
    """A tape could not be recorded or replayed; subclasses in windtunnel._tapes name the cause."""


class HarnessError(WindTunnelError):
    """Wind Tunnel's own machinery failed; never counted against the runtime under test.

    `environment` is True for a fault of the machine rather than of Wind Tunnel (no engine, no base image
    to be had): every verb exits 2 for it."""

    environment: bool = False


class EngineUnavailableError(HarnessError):
    """No Docker engine answered (or the one in use stopped answering)."""

    environment = True


class VerificationError(WindTunnelError):
    """A certification bundle failed verification; `.reason` names the first failed check."""


def _publish() -> None:
    for name in __all__:
        globals()[name].__module__ = __name__


_publish()
