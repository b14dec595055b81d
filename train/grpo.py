"""GRPO on a released dataset with TRL's ``GRPOTrainer`` (docs/design.md §9): phase 1, then phase 2 from
phase 1's checkpoint.

    python train/grpo.py --params train/params.yaml --phase phase1
    python train/grpo.py --params train/params.yaml --phase phase2

Data: ``datasets.load_dataset(data.path, <phase>.config, split=..., revision=data.revision)``, a
release folder or a Hub repo id. Rewards: the functions of ``factory.rewards`` for the families
the phase's data holds (one function per family group, so TRL logs ``rewards/<name>/mean`` per
family, and each function logs ``scoring/<family>/reward``). Outputs of a phase: the checkpoint
(model and tokenizer) in ``output_dir``, its log history, one CSV per reward curve in
``plots_dir`` (``step,reward``: ``total.csv`` and one per family) and a metrics JSON.

``model.name: tiny`` builds a randomly initialised Qwen2 of ``model.tiny``'s shape and a
byte-level BPE tokenizer trained on the phase's prompts: the CPU profile, which proves the loop
in minutes and learns nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script or imported by the tests
    sys.path.insert(0, str(HERE))

from grpo_params import Phase, TinyModel, TrainParams, load_train_params  # noqa: E402

from factory.errors import UserError  # noqa: E402
from factory.io import provenance, write_json_atomic  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]
NO_TIER = 1 << 20  # items without a tier (imported ones) come last in the curriculum


def load_items(path: str, revision: str | None, phase: Phase, seed: int) -> Any:
    """The phase's items as a ``datasets.Dataset``: filtered by family, sampled, curriculum-ordered."""
    import datasets

    try:
        dataset = datasets.load_dataset(path, phase.config, split=phase.split, revision=revision)
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; one clear line
        message = f"cannot load {path!r} config {phase.config!r} split {phase.split!r}: {exc}"
        raise UserError(message.splitlines()[0]) from None
    missing = [c for c in ("prompt", "family", "entry") if c not in dataset.column_names]
    if missing:
        raise UserError(f"{path} ({phase.config}) lacks column(s) {', '.join(missing)}: not a release")
    if phase.families is not None:
        wanted = set(phase.families)
        dataset = dataset.filter(lambda row: row["family"] in wanted)
    if phase.max_items is not None and len(dataset) > phase.max_items:
        dataset = dataset.shuffle(seed=seed).select(range(phase.max_items))
    if len(dataset) == 0:
        raise UserError(f"{path} ({phase.config}, {phase.split}) has no items for this phase")
    if phase.curriculum and "tier" in dataset.column_names:
        dataset = dataset.map(
            lambda row, i: {"curriculum": NO_TIER if row["tier"] is None else row["tier"], "position": i},
            with_indices=True,
        )
        dataset = dataset.sort(["curriculum", "position"])  # ties keep the sampled order
    return dataset


def as_conversations(dataset: Any) -> Any:
    """Prompts as one user message each (the tokenizer's chat template frames them)."""
    return dataset.map(lambda row: {"prompt": [{"role": "user", "content": row["prompt"]}]})


def reward_functions(families: Sequence[str], phase: Phase) -> list[Callable[..., list[float | None]]]:
    """The reward functions of ``factory.rewards`` that judge some of ``families`` (each logs under
    its own name), plus the format reward when asked."""
    from factory.rewards import format_reward, reward_funcs

    r = phase.reward
    kwargs: dict[str, Any] = {"timeout_s": r.timeout_s}
    if r.workers is not None:
        kwargs["workers"] = r.workers
    present = set(families)
    funcs: list[Callable[..., list[float | None]]] = [
        fn for fn in reward_funcs(r.alpha, r.gated, **kwargs) if present & set(fn.families)
    ]
    if r.format:
        funcs.append(format_reward)
    return funcs


def train_tokenizer(texts: Sequence[str], vocab_size: int) -> Any:
    """A byte-level BPE trained on ``texts`` (any text still encodes: the alphabet is all bytes)."""
    import tokenizers as tk
    import transformers

    tokenizer = tk.Tokenizer(tk.models.BPE())
    tokenizer.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<|pad|>", eos_token="<|end|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(shape: TinyModel, tokenizer: Any) -> Any:
    """A randomly initialised Qwen2 causal LM of ``shape`` for ``tokenizer``."""
    import transformers

    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        intermediate_size=shape.intermediate_size,
        max_position_embeddings=shape.max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return transformers.Qwen2ForCausalLM(config)


def model_and_tokenizer(params: TrainParams, phase: Phase, prompts: Sequence[str]) -> tuple[Any, Any]:
    """Phase 2 (``init``) loads its checkpoint; ``tiny`` builds one; else a folder or Hub id, which
    TRL loads itself (so vLLM and ``model_init_kwargs`` apply)."""
    import transformers

    name = phase.init or params.model.name
    if name == "tiny":
        tokenizer = train_tokenizer(prompts, params.model.tiny.vocab_size)
        return tiny_model(params.model.tiny, tokenizer), tokenizer
    if phase.init is not None and not Path(name).is_dir():
        raise UserError(f"{name}: checkpoint folder not found (run the phase it comes from first)")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the tokenizer of {name!r}: {exc}".splitlines()[0]) from None
    return name, tokenizer


def grpo_config(phase: Phase, seed: int) -> Any:
    """TRL's GRPOConfig from the phase's ``grpo`` arguments; an unknown argument is a UserError."""
    import trl

    try:
        return trl.GRPOConfig(
            output_dir=phase.output_dir,
            remove_unused_columns=False,  # the reward functions read the item columns
            shuffle_dataset=not phase.curriculum,
            seed=seed,
            **phase.grpo,
        )
    except (TypeError, ValueError) as exc:
        raise UserError(f"grpo: {exc}".splitlines()[0]) from None


def reward_curves(log_history: Sequence[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """``total`` (TRL's summed reward) and one curve per family (``scoring/<family>/reward``)."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for entry in log_history:
        if "reward" not in entry or "step" not in entry:
            continue
        step = int(entry["step"])
        curves.setdefault("total", []).append((step, float(entry["reward"])))
        for key, value in entry.items():
            if key.startswith("scoring/") and key.endswith("/reward"):
                family = key.split("/")[1]
                curves.setdefault(family, []).append((step, float(value)))
    return curves


def write_curves(plots_dir: str | Path, curves: dict[str, list[tuple[int, float]]]) -> None:
    """One ``<curve>.csv`` (``step,reward``) per curve, for ``dvc plots``."""
    folder = Path(plots_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.csv"):
        old.unlink()
    for name, points in curves.items():
        with (folder / f"{name}.csv").open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["step", "reward"])
            writer.writerows(points)


def run_phase(params: TrainParams, name: str, callbacks: Sequence[Any] = ()) -> dict[str, Any]:
    """Train one phase; returns its metrics (also written to the phase's ``metrics`` file).
    ``callbacks``: TrainerCallbacks (train/teach_check.py stops at a deadline with one)."""
    import torch

    phase: Phase = getattr(params, name)
    torch.manual_seed(params.seed)
    dataset = load_items(params.data.path, params.data.revision, phase, params.seed)
    families = sorted(set(dataset["family"]))
    prompts = list(dataset["prompt"])
    if params.model.chat:
        dataset = as_conversations(dataset)
    model, tokenizer = model_and_tokenizer(params, phase, prompts)
    funcs = reward_functions(families, phase)
    if not funcs:
        raise UserError(f"{name}: no reward function judges the families {families}")
    import trl

    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=funcs,
        args=grpo_config(phase, params.seed),
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=list(callbacks) or None,
    )
    start = time.monotonic()
    result = trainer.train()
    seconds = time.monotonic() - start
    trainer.save_model(phase.output_dir)
    tokenizer.save_pretrained(phase.output_dir)
    history = trainer.state.log_history
    write_json_atomic(Path(phase.output_dir) / "log_history.json", history)
    curves = reward_curves(history)
    write_curves(phase.plots_dir, curves)
    steps = trainer.state.global_step
    metrics = {
        "phase": name,
        "config": phase.config,
        "items": len(dataset),
        "families": families,
        "reward_functions": [fn.__name__ for fn in funcs],
        "steps": steps,
        "seconds_per_step": round(seconds / steps, 3) if steps else None,
        "train_loss": result.training_loss if math.isfinite(result.training_loss) else None,
        "mean_reward": {k: round(sum(v for _, v in pts) / len(pts), 6) for k, pts in curves.items()},
        "data": {"path": params.data.path, "revision": params.data.revision},
        "provenance": provenance(),
    }
    write_json_atomic(phase.metrics, metrics)
    return metrics


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="train/params.yaml", help="the train params file")
    parser.add_argument("--phase", choices=("phase1", "phase2"), required=True)
    args = parser.parse_args(argv)
    try:
        metrics = run_phase(load_train_params(args.params), args.phase)
    except UserError as exc:
        print(f"grpo: error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(metrics, indent=2))


if __name__ == "__main__":
    main()
