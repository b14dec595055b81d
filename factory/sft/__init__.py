"""SFT warm-up data: a teacher model's reasoning and answers, kept only when the scorer says right."""

from factory.sft.stage import run_sft_stage

__all__ = ["run_sft_stage"]
