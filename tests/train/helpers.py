"""Shared test pieces for train/: the card of a release-like folder in the Hub's layout."""

from __future__ import annotations


def hub_card(*configs: str) -> str:
    """A dataset card whose YAML header declares each config's train split
    (``<config>/train-*.parquet``), as the release stage writes it."""
    lines = ["---", "configs:"]
    for config in configs:
        lines += [f"- config_name: {config}", "  data_files:", "  - split: train"]
        lines.append(f"    path: {config}/train-*.parquet")
    return "\n".join([*lines, "---", ""])
