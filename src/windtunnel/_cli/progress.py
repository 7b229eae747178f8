"""`wt certify`'s progress: rich bars with timings and an ETA on a terminal, plain lines otherwise (or with
--plain), one JSON event per line on stdout with --json; then a table of each stage's time.

rich is imported only when a terminal view is drawn, so `wt --help` stays light.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from windtunnel._cli.timings import Timings, duration
from windtunnel._pipeline.events import Event, StageFinished, StageStarted

MODES = ("auto", "rich", "plain", "json")


class ProgressView:
    """The plain view, and what every view shares: per-stage times, this run's timings, the stages pending."""

    def __init__(
        self,
        pending: Sequence[tuple[str, str]],
        timings: Timings,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.pending = list(pending)
        self.timings = timings
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.seconds: dict[str, dict[str, float]] = {}
        self._stage_started = time.monotonic()

    # -- what the pipeline calls ---------------------------------------------------------------------
    def note(self, text: str) -> None:
        self.err.write(f"wt certify: {text}\n")
        self.err.flush()

    def event(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self._stage_started = time.monotonic()
            self.started(event)
            return
        self.seconds.setdefault(event.runtime, {})[event.stage] = event.seconds
        self.timings.record(event.runtime, event.stage, event.seconds)
        if (event.runtime, event.stage) in self.pending:
            self.pending.remove((event.runtime, event.stage))
        self.finished(event)

    def eta(self) -> float | None:
        return self.timings.remaining(self.pending, time.monotonic() - self._stage_started)

    # -- what a view draws ---------------------------------------------------------------------------
    def started(self, event: StageStarted) -> None:
        return None  # the pipeline's own line ("reference: build") says it

    def finished(self, event: StageFinished) -> None:
        left = self.eta()
        eta = f"; about {duration(left)} left" if left is not None and self.pending else ""
        self.note(f"{event.runtime}: {event.stage} took {duration(event.seconds)} ({counts(event)}){eta}")

    def close(self) -> None:
        """Stop drawing and keep this run's timings for the next run's ETA."""
        self.timings.save()

    def report(self, summary: str, verdict: Mapping[str, Any]) -> None:
        """The end: the summary table, each stage's time, then the verdict's signed/verify lines."""
        self.out.write(summary + "\n" + time_table(self.seconds) + "\n" + "".join(verdict["lines"]))
        self.out.flush()


class JsonView(ProgressView):
    """One JSON object per line on stdout (`event`: note, stage_started, check, stage_finished, verdict) and
    nothing else there, for tools."""

    def emit(self, **fields: Any) -> None:
        self.out.write(json.dumps(fields, sort_keys=True) + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.emit(event="note", text=text)

    def started(self, event: StageStarted) -> None:
        expected = self.timings.expected(event.runtime, event.stage)
        self.emit(event="stage_started", runtime=event.runtime, stage=event.stage, expected_seconds=expected)

    def finished(self, event: StageFinished) -> None:
        for check, status in event.checks:
            self.emit(event="check", runtime=event.runtime, stage=event.stage, id=check, status=status)
        statuses = dict(Counter(status for _, status in event.checks))
        self.emit(
            event="stage_finished",
            runtime=event.runtime,
            stage=event.stage,
            seconds=round(event.seconds, 3),
            checks=statuses,
            eta_seconds=self.eta(),
        )

    def report(self, summary: str, verdict: Mapping[str, Any]) -> None:
        fields = {k: v for k, v in verdict.items() if k != "lines"}
        self.emit(event="verdict", seconds=self.seconds, **fields)


class RichView(ProgressView):
    """A bar per runtime on the terminal (stderr): its stage, stages done, elapsed time and ETA; a line per
    finished stage with its time; a table of the times at the end."""

    def __init__(self, pending: Sequence[tuple[str, str]], timings: Timings, **streams: Any) -> None:
        super().__init__(pending, timings, **streams)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(file=self.err, force_terminal=True)
        self.bars = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=self.console,
            refresh_per_second=2,  # enough for a clock in seconds; little output for logs that keep it
        )
        self.tasks: dict[str, Any] = {}
        for runtime in dict.fromkeys(r for r, _ in pending):
            stages = sum(1 for r, _ in pending if r == runtime)
            self.tasks[runtime] = self.bars.add_task(runtime, total=stages, start=False, eta="")
        self.bars.start()

    def note(self, text: str) -> None:
        self.console.print(f"[dim]wt certify:[/dim] {text}", highlight=False, markup=True)

    def started(self, event: StageStarted) -> None:
        task = self.tasks.get(event.runtime)
        if task is None:
            return
        self.bars.start_task(task)
        expected = self.timings.expected(event.runtime, event.stage)
        last = f" (last run {duration(expected)})" if expected is not None else ""
        self.bars.update(task, description=f"{event.runtime}: {event.stage}{last}", eta=self._eta_text())

    def finished(self, event: StageFinished) -> None:
        task = self.tasks.get(event.runtime)
        if task is not None:
            self.bars.update(task, advance=1, eta=self._eta_text())
        mark = "[green]✓[/green]" if all(s in ("passed", "info") for _, s in event.checks) else "[red]✗[/red]"
        self.console.print(
            f"{mark} {event.runtime}: {event.stage} [bold]{duration(event.seconds)}[/bold] ({counts(event)})",
            highlight=False,
        )

    def _eta_text(self) -> str:
        left = self.eta()
        return f"ETA {duration(left)}" if left is not None else "ETA unknown"  # a stage without a last time

    def close(self) -> None:
        self.bars.stop()
        super().close()


def counts(event: StageFinished) -> str:
    """`3 passed, 1 failed` (or `no checks`)."""
    tally = Counter(status for _, status in event.checks)
    return ", ".join(f"{n} {status}" for status, n in tally.most_common()) or "no checks"


def time_table(seconds: Mapping[str, Mapping[str, float]]) -> str:
    """Each runtime's stage times and total, one line per runtime."""
    stages = list(dict.fromkeys(stage for per in seconds.values() for stage in per))
    header = f"{'time':48} " + " ".join(f"{s:>11}" for s in stages) + f" {'total':>9}"
    lines = [header, "-" * len(header)]
    for runtime, per in seconds.items():
        cells = " ".join((duration(per[s]) if s in per else "-").rjust(11) for s in stages)
        lines.append(f"{runtime:48} {cells} {duration(sum(per.values())):>9}")
    return "\n".join(lines)


def make_view(mode: str, pending: Sequence[tuple[str, str]], timings: Timings | None = None) -> ProgressView:
    """The view for --progress MODE: auto is rich when stdout and stderr are terminals, else plain."""
    timings = timings or Timings.load()
    if mode == "json":
        return JsonView(pending, timings)
    if mode == "rich" or (mode == "auto" and sys.stdout.isatty() and sys.stderr.isatty()):
        return RichView(pending, timings)
    return ProgressView(pending, timings)
