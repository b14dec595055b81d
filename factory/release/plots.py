"""The release's plots: PNGs for the card (matplotlib) and the same data as CSV for ``dvc plots``.

PNGs carry no timestamp or software tag, so the same data gives the same bytes. The CSVs are drawn by
the Vega-Lite templates in ``.dvc/plots/`` (see ``dvc.yaml``'s ``plots:`` and
docs/plots-and-metrics.md); their rows are in the order the plots show them:

* ``counts_by_tier_family``: ``tier, family, items``; tiers in order, families in name order;
* ``trace_length``: ``bin, min_length, max_length, cases``; one row per bin, shortest first, every bin
  up to the longest trace (empty ones too): the bins double every two steps (1, 2, 3, 4–5, 6–7,
  8–11, …), so each is about as wide as the next on a log axis;
* ``yield_funnel``: ``stage, unit, in, out``; the stages in pipeline order.

The page ``dvc plots show`` draws them in is ``factory.release.offline_page``'s.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from factory.io import write_text_atomic  # noqa: E402

PNG_METADATA = {"Software": None}

# What each stage's in and out count (the funnel's share kept compares a stage's out with its own in).
STAGE_UNITS = {
    "synthesize": "programs",
    "inputs": "programs",
    "execute": "cases",
    "trace": "cases",
    "tasks": "cases",
    "difficulty": "items",
    "assemble": "items",
}


def _tiers_families(summary: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], int]]:
    cells = {tuple(k.split("\t")): n for k, n in summary["tier_family"].items()}
    tiers = sorted({t for t, _ in cells}, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t))
    families = sorted({f for _, f in cells})
    return tiers, families, cells


def trace_length_bins(top: int, bottom: int = 1) -> list[tuple[int, int]]:
    """Bins ``[lo, hi)`` from ``bottom`` (0 or 1) past ``top``: 0, 1, 2, 3, then 4, 6, 8, 12, 16, 24, …
    (each edge 3/2 or 4/3 of the one before: two bins per doubling)."""
    edges = [e for e in (0, 1, 2, 3) if e >= bottom]
    while edges[-1] <= top:
        last = edges[-1]
        edges.append(last * 3 // 2 if last & (last - 1) == 0 else last * 4 // 3)
    return [(lo, hi) for lo, hi in zip(edges, edges[1:], strict=False) if lo <= top]


def _bin_label(lo: int, hi: int) -> str:
    return str(lo) if hi - lo == 1 else f"{lo}–{hi - 1}"


def _trace_rows(lengths: dict[Any, int]) -> list[dict[str, Any]]:
    counts = {int(k): n for k, n in lengths.items()}
    if not counts:
        return []
    rows = []
    for lo, hi in trace_length_bins(max(counts), 0 if min(counts) < 1 else 1):
        n = sum(c for length, c in counts.items() if lo <= length < hi)
        rows.append({"bin": _bin_label(lo, hi), "min_length": lo, "max_length": hi - 1, "cases": n})
    return rows


def plot_rows(summary: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The data of each plot, as rows (what the CSV files and the PNGs show)."""
    tiers, families, cells = _tiers_families(summary)
    return {
        "counts_by_tier_family": [
            {"tier": t, "family": f, "items": cells.get((t, f), 0)} for t in tiers for f in families
        ],
        "trace_length": _trace_rows(summary["trace_lengths"]),
        "yield_funnel": [
            {"stage": s["stage"], "unit": STAGE_UNITS.get(s["stage"], ""), "in": s["in"], "out": s["out"]}
            for s in summary["stages"]
        ],
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
    bins = rows["trace_length"]
    ax.bar(range(len(bins)), [r["cases"] for r in bins], 0.9)
    ax.set_xticks(range(len(bins)), [r["bin"] for r in bins], rotation=45, ha="right")
    ax.set_xlabel("trace length (line events; two bins per doubling)")
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
            f"{r['out']:,} of {r['in']:,} {r['unit']}".rstrip(),
            va="center",
        )
    ax.invert_yaxis()
    ax.set_xlim(0, 1.4)
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("share kept (out / in; each stage in its own unit)")
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
