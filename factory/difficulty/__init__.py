"""The difficulty stage: a solver model answers each task n times; keep a band of pass counts."""

from factory.difficulty.stage import judge_samples, run_difficulty_stage

__all__ = ["judge_samples", "run_difficulty_stage"]
