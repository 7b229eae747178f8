"""Stop signals, one way for every verb: SIGINT, SIGTERM and SIGHUP unwind the stack like Ctrl-C, a second exits.

The first stop signal raises `Stopped` (a KeyboardInterrupt) where the program is, so every cleanup on the
way out runs: post_run() and close() of an open runtime, its containers and networks, the machine-wide and
--out locks. What was written stays (a certify bundle keeps its evidence, unsigned). `wt` then exits
128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (`EXIT_CODES`, the codes of the
one vocabulary's Exit).

A second stop signal while that cleanup runs exits at once with the same code, without a traceback and
without waiting for the engine: what is left is labelled with its run and owner pid, so the next run (or
`wt images sweep`) removes it once this process is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from windtunnel._core.vocabulary import Exit

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_CODES: dict[signal.Signals, Exit] = {
    signal.SIGINT: Exit.INTERRUPTED,
    signal.SIGTERM: Exit.TERMINATED,
    signal.SIGHUP: Exit.HANGUP,
}
"""The exit code after a stop signal: 130 SIGINT, 143 SIGTERM, 129 SIGHUP (128 + the signal's number)."""
_DEFAULTS = (signal.SIG_DFL, signal.default_int_handler)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; `.code` is the exit code it asks for."""

    def __init__(self, signum: int) -> None:
        self.signal = signal.Signals(signum)
        self.code: int = EXIT_CODES.get(self.signal, 128 + signum)
        super().__init__(f"stopped by signal {self.signal.name}")


class _State:
    stopping: signal.Signals | None = None
    deferring: int = 0
    pending: signal.Signals | None = None


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """The exit code for an interrupt: its signal's, or 130 for a plain KeyboardInterrupt (Ctrl-C)."""
    return interrupt.code if isinstance(interrupt, Stopped) else EXIT_CODES[signal.SIGINT]


@contextlib.contextmanager
def stop_signals(
    signals: tuple[signal.Signals, ...] = STOP_SIGNALS, *, until_exit: bool = False
) -> Iterator[None]:
    """While inside, each of `signals` raises Stopped, and a second one exits at once (module docstring).

    Only from the main thread, and only over a default handler: a handler someone else installed (a test
    runner's, a server's) is theirs. The handlers in place before are restored on the way out, except
    with `until_exit` (`wt` itself) after a stop: then the signals are ignored from there on, so the
    process ends with the stop's exit code, not killed by a late second signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {}
    for sig in signals:
        if signal.getsignal(sig) in _DEFAULTS:
            replaced[sig] = signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        if until_exit and _State.stopping is not None:
            # The process is on its way out with the stop's code: a late signal must not kill it by that
            # signal instead (Python's finalization puts back the default handlers, but not SIG_IGN).
            replaced = dict.fromkeys(replaced, signal.SIG_IGN)
        for sig, handler in replaced.items():
            if signal.getsignal(sig) is _on_signal:  # unless someone replaced it meanwhile
                signal.signal(sig, handler)
        if replaced:
            _State.stopping = None


@contextlib.contextmanager
def deferred_stop() -> Iterator[None]:
    """A stop signal arriving inside is raised when the block ends, so the block (signing a bundle) is
    never left half done; a second one still exits at once."""
    _State.deferring += 1
    try:
        yield
    finally:
        _State.deferring -= 1
    pending, _State.pending = _State.pending, None
    if pending is not None and _State.deferring == 0:
        raise Stopped(pending)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _State.stopping is not None:
        code = EXIT_CODES.get(signal.Signals(signum), 128 + signum)
        os.write(
            2,
            f"wt: {signal.Signals(signum).name} again: exiting now (exit {code}) without finishing the "
            "cleanup; what is left carries this run's labels and goes with the next run or "
            "`wt images sweep`\n".encode(),
        )
        os._exit(code)
    _State.stopping = signal.Signals(signum)
    if _State.deferring:
        _State.pending = _State.stopping
        return
    raise Stopped(signum)
