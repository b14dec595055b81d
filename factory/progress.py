"""Progress for long stages: a rich bar (rate, ETA) in a terminal, a few plain lines elsewhere."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

console = Console(stderr=True)


class RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{rate_text(speed)}/s" if speed else "?/s", style="progress.data.speed")


def rate_text(speed: float) -> str:
    """A rate for people: whole numbers, with decimals below 10/s (a model answers a few per second)."""
    return f"{speed:,.0f}" if speed >= 10 else f"{speed:.2f}"


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a bar in a terminal, logs ~5 lines (with rate) otherwise."""
    if interactive():
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=console, transient=False) as bar:
            task = bar.add_task(description, total=total)

            def advance_bar(n: int = 1) -> None:
                bar.advance(task, n)

            yield advance_bar
        return
    start = time.monotonic()
    done = 0
    next_log = max(1, (total or 0) // 5) if total else 1000

    def advance(n: int = 1) -> None:
        nonlocal done, next_log
        done += n
        if done >= next_log:
            rate = done / max(time.monotonic() - start, 1e-9)
            of = f"/{total}" if total else ""
            print(f"[{description}] {done}{of} ({rate_text(rate)}/s)", file=sys.stderr, flush=True)
            next_log += max(1, (total or 5000) // 5)

    yield advance
