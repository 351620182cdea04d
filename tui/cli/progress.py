"""Progress of a long command, on stderr: a rich display on a terminal, plain periodic lines when
stderr is a pipe or a file, nothing with ``--quiet``.

Each task shows done/total, the rate, the time left and the failures. The rate is over the work done
since the task was first seen (work already done when a resumed run starts does not count), and the
time left is the work remaining at that rate. Plain lines are written every ``interval`` seconds
while a task moves and when it completes (a command that fails at once prints only its error).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

MODES = ("rich", "plain", "off")


def choose_mode(quiet: bool, stream: TextIO | None = None, as_json: bool = False) -> str:
    """``off`` with --quiet, ``rich`` when the stream is a terminal, else ``plain``; with --json, only
    on a terminal (a pipeline that asked for JSON gets no other text)."""
    if quiet:
        return "off"
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return "rich"
    return "off" if as_json else "plain"


def fmt_duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``1h02m``; ``?`` when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


@dataclass
class Task:
    """One thing being counted: ``done`` of ``total`` (None when unknown) ``unit``s, ``failed`` of them."""

    key: str
    label: str
    unit: str = "items"
    total: int | None = None
    done: int = 0
    failed: int = 0
    start_done: int = 0
    started: float = 0.0
    last_line: float | None = None
    handle: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def rate(self, now: float) -> float | None:
        """Units per second since the task was first seen (None before any progress)."""
        elapsed = now - self.started
        moved = self.done - self.start_done
        if moved <= 0 or elapsed <= 0:
            return None
        return moved / elapsed

    def eta(self, now: float) -> float | None:
        """Seconds left at the current rate (0 when complete, None when unknown)."""
        if self.total is None:
            return None
        left = max(0, self.total - self.done)
        if left == 0:
            return 0.0
        rate = self.rate(now)
        return None if rate is None else left / rate

    @property
    def complete(self) -> bool:
        """True once ``done`` reached a known ``total``."""
        return self.total is not None and self.done >= self.total

    def amount(self, value: float) -> str:
        """A count in the task's unit (bytes as kB or MB)."""
        if self.unit == "bytes":
            return f"{value / 1e6:,.1f} MB" if value >= 1e6 else f"{value / 1e3:,.1f} kB"
        return str(int(value))

    def speed(self, rate: float) -> str:
        """A rate in the task's unit per second (bytes as MB/s or kB/s)."""
        if self.unit == "bytes":
            return f"{rate / 1e6:,.2f} MB/s" if rate >= 1e6 else f"{rate / 1e3:,.1f} kB/s"
        return f"{rate:.2f} {self.unit}/s" if rate < 10 else f"{rate:,.0f} {self.unit}/s"

    def line(self, now: float) -> str:
        """The plain line: ``label done/total (pct) · rate · ETA · failures``."""
        if self.total is not None:
            pct = 100.0 * self.done / self.total if self.total else 100.0
            parts = [f"{self.label} {self.amount(self.done)}/{self.amount(self.total)} ({pct:.0f}%)"]
        else:
            parts = [f"{self.label} {self.amount(self.done)}"]
        rate = self.rate(now)
        if rate is not None:
            parts.append(self.speed(rate))
        if self.total is not None:
            done = f" (done in {fmt_duration(now - self.started)})" if self.complete else ""
            parts.append(f"ETA {fmt_duration(self.eta(now))}{done}")
        if self.failed:
            parts.append(f"{self.failed} failed")
        return " · ".join(parts)


class ProgressDisplay:
    """Progress for one command; use as a context manager.

    Args:
        mode: ``rich``, ``plain`` or ``off`` (see :func:`choose_mode`).
        stream: where to write (default stderr).
        interval: seconds between plain lines of a moving task.
        clock: the time source (tests give their own).
        prefix: put before every plain line.
    """

    def __init__(self, mode: str = "plain", stream: TextIO | None = None, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic, prefix: str = ""):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.mode = mode
        self.stream = stream or sys.stderr
        self.interval = interval
        self.clock = clock
        self.prefix = prefix
        self.tasks: dict[str, Task] = {}
        self._rich: Any = None

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> ProgressDisplay:
        if self.mode == "rich":
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            from tui.cli.console import SafeConsole as Console

            self._rich = Progress(
                TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}", style="progress.data.speed"),
                TextColumn("ETA"), TimeRemainingColumn(),
                TextColumn("{task.fields[failures]}", style="red"),
                console=Console(file=self.stream, stderr=self.stream is sys.stderr), transient=False)
            self._rich.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._rich is not None:
            self._rich.__exit__(*exc)
            self._rich = None
        elif self.mode == "plain" and exc[0] is None:
            for task in self.tasks.values():  # the final state, where the last line was older
                if task.extra.get("printed") != (task.done, task.total, task.failed):
                    self._line(task)

    # -- tasks ----------------------------------------------------------------------------------
    def add(self, key: str, label: str, total: int | None = None, unit: str = "items", done: int = 0) -> Task:
        """Start counting a task (``done`` already done before now: not counted in the rate)."""
        task = Task(key, label, unit, total, done, 0, done, self.clock())
        task.last_line = task.started  # the first plain line comes after ``interval`` (or at the end)
        self.tasks[key] = task
        if self._rich is not None:
            task.handle = self._rich.add_task(label, total=total, completed=done, rate="", failures="")
        return task

    def update(self, key: str, done: int | None = None, total: int | None = None, advance: int = 0,
               failed: int = 0) -> None:
        """Set or advance a task's count (``failed`` more of its units failed)."""
        task = self.tasks.get(key)
        if task is None:
            return
        if total is not None:
            task.total = total
        if done is not None:
            task.done = done
        task.done += advance
        task.failed += failed
        if self._rich is not None:
            rate = task.rate(self.clock())
            self._rich.update(task.handle, completed=task.done, total=task.total,
                              rate="" if rate is None else task.speed(rate),
                              failures=f"{task.failed} failed" if task.failed else "")
        self._maybe_line(task, force=task.complete)

    def stage(self, labels: dict[str, str] | None = None, units: dict[str, str] | None = None
              ) -> Callable[[str, int, int], None]:
        """An engine ``progress(stage, done, total)`` callback: one task per stage, started on first use."""
        labels, units = labels or {}, units or {}

        def progress(stage: str, done: int, total: int) -> None:
            known = total if total > 0 else None  # 0: not known (yet)
            if stage not in self.tasks:
                self.add(stage, labels.get(stage, stage), known, units.get(stage, "items"))
            self.update(stage, done=done, total=known)

        return progress

    def log(self, message: str) -> None:
        """A line of text above the display (or in the plain stream); nothing when off."""
        if self.mode == "off":
            return
        if self._rich is not None:
            self._rich.console.print(message, markup=False, highlight=False)
        else:
            self._write(message, prefix=False)

    # -- plain lines ----------------------------------------------------------------------------
    def _maybe_line(self, task: Task, force: bool = False) -> None:
        if self.mode != "plain":
            return
        if task.extra.get("printed") == (task.done, task.total, task.failed):
            return  # nothing new to say
        if force or self.clock() - (task.last_line or task.started) >= self.interval:
            self._line(task)

    def _line(self, task: Task) -> None:
        now = self.clock()
        task.last_line = now
        task.extra["printed"] = (task.done, task.total, task.failed)
        self._write(task.line(now))

    def _write(self, text: str, prefix: bool = True) -> None:
        self.stream.write(f"{self.prefix if prefix else ''}{text}\n")
        self.stream.flush()
