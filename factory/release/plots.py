"""The release's plots: PNGs for the card (matplotlib) and the same data as CSV for ``dvc plots``.

PNGs carry no timestamp or software tag, so the same data gives the same bytes.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from factory.io import write_text_atomic  # noqa: E402

PNG_METADATA = {"Software": None}


def _tiers_families(summary: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], int]]:
    cells = {tuple(k.split("\t")): n for k, n in summary["tier_family"].items()}
    tiers = sorted({t for t, _ in cells}, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t))
    families = sorted({f for _, f in cells})
    return tiers, families, cells


def plot_rows(summary: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The data of each plot, as rows (what the CSV files and the PNGs show)."""
    tiers, families, cells = _tiers_families(summary)
    return {
        "counts_by_tier_family": [
            {"tier": t, "family": f, "items": cells.get((t, f), 0)} for t in tiers for f in families
        ],
        "trace_length": [{"trace_length": k, "cases": v} for k, v in summary["trace_lengths"].items()],
        "yield_funnel": [{"stage": s["stage"], "in": s["in"], "out": s["out"]} for s in summary["stages"]],
    }


def _save(fig: plt.Figure, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata=PNG_METADATA)
    plt.close(fig)
    path.write_bytes(buf.getvalue())


def write_plots(assets_dir: Path, csv_dir: Path | None, summary: dict[str, Any]) -> None:
    """Write the three PNGs into ``assets_dir`` and, when given, their data as CSV into ``csv_dir``."""
    rows = plot_rows(summary)
    assets_dir.mkdir(parents=True, exist_ok=True)
    tiers, families, cells = _tiers_families(summary)

    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(len(families), 1)
    for i, family in enumerate(families):
        xs = [j + i * width for j in range(len(tiers))]
        ax.bar(xs, [cells.get((t, family), 0) for t in tiers], width, label=family)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(tiers))], [f"tier {t}" for t in tiers])
    ax.set_ylabel("items")
    ax.set_title("Items by tier and family")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    _save(fig, assets_dir / "counts_by_tier_family.png")

    fig, ax = plt.subplots(figsize=(8, 4))
    lengths = rows["trace_length"]
    top = max((r["trace_length"] for r in lengths), default=1)
    bins = sorted({round(b) for b in np.geomspace(1, max(top, 2) + 1, 30)})
    ax.hist(
        [r["trace_length"] for r in lengths],
        bins=bins,
        weights=[r["cases"] for r in lengths],
        edgecolor="white",
    )
    ax.set_xscale("log")
    ax.set_xlabel("trace length (line events, log scale)")
    ax.set_ylabel("cases")
    ax.set_title("Trace length of the released cases")
    fig.tight_layout()
    _save(fig, assets_dir / "trace_length.png")

    fig, ax = plt.subplots(figsize=(8, 4))
    funnel = rows["yield_funnel"]
    shares = [r["out"] / r["in"] if r["in"] else 0.0 for r in funnel]
    bars = ax.barh([r["stage"] for r in funnel], shares, color="#1f77b4")
    for bar, r in zip(bars, funnel, strict=True):
        ax.text(
            bar.get_width() + 0.01,
            bar.get_y() + bar.get_height() / 2,
            f"{r['out']:,} of {r['in']:,}",
            va="center",
        )
    ax.invert_yaxis()
    ax.set_xlim(0, 1.3)
    ax.set_xlabel("share kept (each stage in its own unit: programs, cases, items)")
    ax.set_title("Yield per stage")
    fig.tight_layout()
    _save(fig, assets_dir / "yield_funnel.png")

    if csv_dir is not None:
        for name, data in rows.items():
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=list(data[0]) if data else ["empty"], lineterminator="\n")
            writer.writeheader()
            writer.writerows(data)
            write_text_atomic(csv_dir / f"{name}.csv", buf.getvalue())
