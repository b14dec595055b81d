"""SFT warm-up data: a teacher model's reasoning and answers, kept only when the scorer says right."""

from factory.sft.stage import SFT_SCHEMA, run_sft_stage

__all__ = ["SFT_SCHEMA", "run_sft_stage"]
