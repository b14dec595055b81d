"""Per-stage accounting: items in, out, and dropped by reason; written as a DVC metrics JSON."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from factory.io import provenance, write_json_atomic


@dataclass
class StageStats:
    """Counts for one stage run. ``extra`` holds stage-specific breakdowns (e.g. yield per tier)."""

    stage: str
    items_in: int = 0
    items_out: int = 0
    dropped: Counter = field(default_factory=Counter)
    extra: dict[str, Any] = field(default_factory=dict)

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] += n

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "in": self.items_in,
            "out": self.items_out,
            "dropped": dict(sorted(self.dropped.items())),
            "dropped_total": sum(self.dropped.values()),
            **self.extra,
            "provenance": provenance(),
        }

    def write(self, path: str | Path) -> None:
        write_json_atomic(path, self.to_dict())

    def print_summary(self, console: Console | None = None) -> None:
        """One screen: in, out, dropped by reason, then ``extra["notice"]`` (if any) in bold yellow."""
        console = console or Console(stderr=True)
        table = Table(title=f"{self.stage}: {self.items_in:,} in → {self.items_out:,} out")
        table.add_column("dropped because", style="yellow")
        table.add_column("count", justify="right")
        table.add_column("share of in", justify="right")
        for reason, n in self.dropped.most_common(15):
            share = n / self.items_in if self.items_in else 0.0
            table.add_row(reason, f"{n:,}", f"{share:.1%}")
        if len(self.dropped) > 15:
            rest = sum(n for _, n in self.dropped.most_common()[15:])
            table.add_row(f"({len(self.dropped) - 15} more reasons)", f"{rest:,}", "")
        console.print(table)
        if "notice" in self.extra:
            console.print(f"[bold yellow]{self.extra['notice']}[/]")
