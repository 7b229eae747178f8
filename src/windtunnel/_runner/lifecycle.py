"""The one runtime lifecycle, for every verb: lock, build, pre_run, provisioned handles, post_run, close.

`open_runtime(description, ...)` takes the machine-wide lock (a finite max_concurrency), builds the runtime
once, and on every way out (an error, Ctrl-C, SIGTERM or SIGHUP, which windtunnel._signals turns into
KeyboardInterrupt while the runtime is open, or any KeyboardInterrupt or SystemExit a signal handler
raises) calls the plugin's post_run(), then the runtime's close(), then releases the lock; an exception
during one of these steps does not skip the next (a second stop signal exits the process at once).
pre_run() is a call on the opened runtime, because `wt selftest` must select scenarios and check the
runtime's abilities between the build and pre_run().

`fresh_runtime(...)` is a fresh runtime with a gateway of its own, derived from an open one (the tapes),
closed on every way out as the runtime itself is. `provisioned(...)` is the handle's lifecycle inside it:
provision (or provision_reference for a case), then teardown() on every way out. `started_mcps(...)` starts a pack's mocks where the runtime reaches them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from windtunnel._core.abilities import ClosableRuntime, PrestartingRuntime
from windtunnel._core.agent_runtime import (
    AgentConfig,
    AgentHandle,
    AgentRuntime,
    MCPHandle,
    MCPHostingAgentRuntime,
    MCPSpec,
    MockServerPlan,
    ReferenceCapableAgentRuntime,
)
from windtunnel._core.foreign import foreign_code
from windtunnel._core.reference import ReferenceCase
from windtunnel._locks import machine_lock
from windtunnel._runtimes.abilities import FreshGatewayRuntime
from windtunnel._runtimes.plugin import PostRunPlugin, PreRunPlugin
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel._scenario.model import Scenario
from windtunnel._signals import stop_signals
from windtunnel.errors import HarnessError, PluginError, RuntimeFault, UsageError, WindTunnelError

log = logging.getLogger("windtunnel.runner")

Problem = Callable[[WindTunnelError], None]
"""Where post_run() and close() failures go when the caller keeps them (a sweep's problems, certify's
checks); without one the first is raised, unless the run is already failing with its own error."""


@dataclass(slots=True)
class OpenRuntime:
    """A built runtime inside its lifecycle. `scenarios` is what pre_run() and post_run() receive."""

    description: RuntimeDescription
    runtime: AgentRuntime
    scenarios: list[Scenario] = field(default_factory=list)
    pre_ran: bool = False

    @property
    def name(self) -> str:
        return self.description.name

    def pre_run(self, scenarios: Sequence[Scenario]) -> None:
        """The plugin's pre_run(runtime, scenarios, name), once; what it raises is a RuntimeFault naming the
        plugin and the hook. post_run() runs at the end either way."""
        if self.pre_ran:
            raise HarnessError(
                f"pre_run() of {self.name!r} was asked for twice", hint="call it once per build"
            )
        self.scenarios, self.pre_ran = list(scenarios), True
        if isinstance(self.description.plugin, PreRunPlugin):
            _hook(self, "pre_run", self.description.plugin.pre_run)

    def model_label(self) -> str | None:
        return self.description.model_label()


@contextlib.contextmanager
def open_runtime(
    description: RuntimeDescription,
    *,
    lock_dir: Path,
    label: str | None = None,
    on_problem: Problem | None = None,
    prestart: bool = False,
) -> Iterator[OpenRuntime]:
    """Lock, build and yield the runtime; post_run() and close() on every way out (see the module docstring).

    A build that raises leaves nothing to close (the lock is released). `label` names the run for what
    the runtime starts (default: the runtime's name). `prestart`, for verbs that provision handle after
    handle (certify, the conformance suite): a PrestartingRuntime starts each next handle's process while
    the current one is in use; its close() removes what it started.
    """
    with contextlib.ExitStack() as exits:
        exits.enter_context(stop_signals())
        exits.enter_context(runtime_lock(description, lock_dir))
        opened = OpenRuntime(description, build_runtime(description, label))
        exits.push(_finally(opened, "close", _close, on_problem))  # last out: LIFO
        exits.push(_finally(opened, "post_run", _post_run, on_problem))
        if prestart and isinstance(opened.runtime, PrestartingRuntime):
            opened.runtime.prestart_next()
        yield opened


@contextlib.contextmanager
def fresh_runtime(runtime: FreshGatewayRuntime, gateway: Any, *, name: str) -> Iterator[Any]:
    """`runtime.with_gateway(gateway)`, closed on every way out (an error, Ctrl-C, a stop signal); a close
    that fails is a HarnessError raised only when nothing else is."""
    with stop_signals():
        fresh = runtime.with_gateway(gateway)
        failing = True
        try:
            yield fresh
            failing = False
        finally:
            try:
                _close_runtime(name, fresh)
            except WindTunnelError as problem:
                if not failing:
                    raise
                log.warning("close of %s also failed: %s", name, problem)


@contextlib.contextmanager
def runtime_lock(description: RuntimeDescription, lock_dir: Path) -> Iterator[None]:
    """A finite max_concurrency holds the machine-wide lock on the plugin's lock_key for the whole run."""
    if description.max_concurrency is None:
        yield
        return
    with machine_lock(description.lock_key(), lock_dir):
        yield


def build_runtime(description: RuntimeDescription, label: str | None = None) -> AgentRuntime:
    """Call the plugin's build(); errors other than ours name the plugin."""
    with foreign_code(
        PluginError,
        f"runtime plugin {description.name!r}: build()",
        hint="fix the plugin's build(); it should construct the runtime without starting a run",
        note=f"\n  loaded from: {description.origin}",
        plugin=description.name,
        entry_point=description.origin,
    ):
        runtime: AgentRuntime = description.plugin.build(description.name, label or description.name, None)
    return runtime


def _post_run(opened: OpenRuntime) -> None:
    if isinstance(opened.description.plugin, PostRunPlugin):
        _hook(opened, "post_run", opened.description.plugin.post_run)


def _close(opened: OpenRuntime) -> None:
    _close_runtime(opened.name, opened.runtime)


def _close_runtime(name: str, runtime: object) -> None:
    if not isinstance(runtime, ClosableRuntime):
        return
    try:
        runtime.close()
    except Exception as exc:
        raise HarnessError(
            f"closing {name} failed: {type(exc).__name__}: {exc}",
            hint="its containers may be left behind: `wt images sweep` removes those of dead runs",
            runtime=name,
        ) from exc


def _hook(opened: OpenRuntime, name: str, hook: Callable[..., object]) -> None:
    try:
        hook(opened.runtime, list(opened.scenarios), opened.name)
    except Exception as exc:
        raise RuntimeFault(
            f"runtime plugin {opened.name!r}: {name}() raised {type(exc).__name__}: {exc}\n"
            f"  loaded from: {opened.description.origin}",
            hint=f"fix the plugin's {name}(); it runs once per sweep "
            + ("before any run" if name == "pre_run" else "after every run, even on abort"),
            runtime=opened.name,
            plugin=opened.name,
            hook=name,
        ) from exc


def _finally(
    opened: OpenRuntime, what: str, step: Callable[[OpenRuntime], None], on_problem: Problem | None
) -> Callable[[type[BaseException] | None, BaseException | None, TracebackType | None], bool]:
    """An exit callback running `step` whatever is in flight. Its own failure goes to `on_problem`; without
    one it is raised only when nothing else is (never in place of the run's own error)."""

    def exit_(
        _kind: type[BaseException] | None, error: BaseException | None, _trace: TracebackType | None
    ) -> bool:
        try:
            step(opened)
        except WindTunnelError as problem:
            if on_problem is not None:
                on_problem(problem)
            elif error is None:
                raise
            else:
                log.warning("%s of %s also failed: %s", what, opened.name, problem)
        return False

    return exit_


@contextlib.contextmanager
def provisioned(
    runtime: AgentRuntime,
    config: AgentConfig,
    mcps: Sequence[MCPHandle] = (),
    *,
    runtime_name: str,
    case: ReferenceCase | None = None,
) -> Iterator[AgentHandle]:
    """A handle from provision() (provision_reference() with a case), torn down on every way out.

    What provision raises propagates as it is (callers tell a refused config from a broken runtime); a
    case needs a reference-capable runtime (UsageError otherwise).
    """
    if case is None:
        handle = runtime.provision(config, list(mcps))
    elif isinstance(runtime, ReferenceCapableAgentRuntime):
        handle = runtime.provision_reference(config, case, list(mcps))
    else:
        raise UsageError(
            f"runtime {runtime_name!r} has no provision_reference(), so it cannot run reference cases",
            hint="use a reference-capable runtime (for example the containerised 'reference' runtime)",
            runtime=runtime_name,
        )
    try:
        yield handle
    finally:
        safe_teardown(handle, runtime_name)


@contextlib.contextmanager
def started_mcps(runtime: AgentRuntime, plans: Sequence[MockServerPlan]) -> Iterator[list[MCPHandle]]:
    """Start the pack's mocks where the runtime can reach them; stop them afterwards, whatever happened."""
    if not plans:
        yield []
        return
    if isinstance(runtime, MCPHostingAgentRuntime):
        handles = runtime.start_mcps(plans)
        try:
            yield handles
        finally:
            runtime.stop_mcps(handles)
        return
    from windtunnel._mcp.loopback import start_loopback, stop_loopback

    loopback = start_loopback(plans)
    try:
        yield list(loopback)
    finally:
        stop_loopback(loopback)


def with_mcp_specs(config: AgentConfig, mcps: Sequence[MCPHandle]) -> AgentConfig:
    specs = tuple(MCPSpec(handle.name, handle.url) for handle in mcps)
    return dataclasses.replace(config, mcp_servers=specs) if specs else config


def safe_teardown(handle: AgentHandle | None, runtime_name: str) -> BaseException | None:
    """Call teardown(); it must not raise, but if it does the error is logged and returned, never raised."""
    if handle is None:
        return None
    try:
        handle.teardown()
    except Exception as exc:  # noqa: BLE001 - teardown runs in finally paths; report, never mask
        log.warning(
            "runtime %s: teardown() raised %s: %s (teardown must not raise)",
            runtime_name,
            type(exc).__name__,
            exc,
        )
        return exc
    return None
