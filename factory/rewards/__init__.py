"""Reward adapters over the one scorer (docs/design.md §5): TRL reward functions and verl's compute_score.

Neither adapter imports TRL, torch or verl: they only follow those libraries' calling contracts.
"""

from __future__ import annotations

from factory.rewards.trl import (
    FamilyReward,
    codegen_reward,
    coverage_reward,
    format_reward,
    input_reward,
    make_codegen_reward,
    make_coverage_reward,
    make_input_reward,
    make_trace_reward,
    make_white_box_reward,
    reward_funcs,
    trace_reward,
    white_box_reward,
)
from factory.rewards.verl import compute_score, compute_score_batch

__all__ = [
    "FamilyReward",
    "codegen_reward",
    "compute_score",
    "compute_score_batch",
    "coverage_reward",
    "format_reward",
    "input_reward",
    "make_codegen_reward",
    "make_coverage_reward",
    "make_input_reward",
    "make_trace_reward",
    "make_white_box_reward",
    "reward_funcs",
    "trace_reward",
    "white_box_reward",
]
