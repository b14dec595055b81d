"""A short GPU check of the phase-1 loop: a randomly initialised model of Qwen2.5-0.5B's shape (no
weights are fetched), a tokenizer trained on the spot, a few GRPO steps on phase-1 items with the
white-box reward, generation by transformers (no vLLM). Prints seconds per step and peak GPU memory
as one JSON line; finishes in a few minutes on one GPU.

    python train/gpu_check.py --data data/release --steps 4
    python train/gpu_check.py --data data/release --shape tiny --steps 2   # the CPU dry check
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # the factory package, when it is not installed

import grpo  # noqa: E402
from grpo_params import Phase, TinyModel  # noqa: E402

# Qwen2.5-0.5B's config.json (architecture only).
QWEN25_05B = {
    "vocab_size": 151936,
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}


def build_model(shape: str, tokenizer) -> object:
    import transformers

    if shape == "tiny":
        return grpo.tiny_model(TinyModel(), tokenizer)
    config = transformers.Qwen2Config(
        **QWEN25_05B,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return transformers.Qwen2ForCausalLM(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/release", help="release folder or Hub repo id")
    parser.add_argument("--config", default="phase1")
    parser.add_argument("--revision", default=None)
    parser.add_argument("--shape", choices=("qwen2.5-0.5b", "tiny"), default="qwen2.5-0.5b")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--prompts-per-step", type=int, default=4)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--max-completion", type=int, default=512)
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import torch

    cuda = torch.cuda.is_available()
    out = tempfile.mkdtemp(prefix="gpu_check.")
    phase = Phase(
        config=args.config,
        max_items=args.prompts_per_step * args.steps,
        families=["white_box"],
        output_dir=out,
        plots_dir=out,
        metrics=f"{out}/metrics.json",
        grpo={
            "max_steps": args.steps,
            "learning_rate": 1e-6,
            "per_device_train_batch_size": args.prompts_per_step * args.generations,
            "num_generations": args.generations,
            "max_completion_length": args.max_completion,
            "beta": 0.0,
            "bf16": cuda,
            "use_cpu": not cuda,
            "gradient_checkpointing": cuda,
            "report_to": [],
            "logging_steps": 1,
            "save_strategy": "no",
            "disable_tqdm": True,
            "dataloader_num_workers": 0,
        },
    )
    torch.manual_seed(0)
    dataset = grpo.load_items(args.data, args.revision, phase, seed=0)
    tokenizer = grpo.train_tokenizer(list(dataset["prompt"]), 4000)
    model = build_model(args.shape, tokenizer)
    n_params = sum(p.numel() for p in model.parameters())
    import trl

    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=grpo.reward_functions(["white_box"], phase),
        args=grpo.grpo_config(phase, 0),
        train_dataset=grpo.as_conversations(dataset),
        processing_class=tokenizer,
    )
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.monotonic()
    trainer.train()
    total = time.monotonic() - start
    steps = [e["step_time"] for e in trainer.state.log_history if "step_time" in e]
    rewards = [e["reward"] for e in trainer.state.log_history if "reward" in e]
    report = {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "shape": args.shape,
        "parameters": n_params,
        "steps": trainer.state.global_step,
        "completions_per_step": args.prompts_per_step * args.generations,
        "max_completion_length": args.max_completion,
        "seconds_per_step": [round(s, 3) for s in steps],
        "seconds_per_step_after_first": round(sum(steps[1:]) / len(steps[1:]), 3) if len(steps) > 1 else None,
        "wall_seconds": round(total, 1),
        "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
        "rewards": rewards,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
