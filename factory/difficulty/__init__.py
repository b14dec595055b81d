"""The difficulty stage: a solver model answers each task n times; keep a band of pass counts."""

from factory.difficulty.stage import DIFFICULTY_SCHEMA, PASS_STATS_SCHEMA, judge_samples, run_difficulty_stage

__all__ = ["DIFFICULTY_SCHEMA", "PASS_STATS_SCHEMA", "judge_samples", "run_difficulty_stage"]
