"""vLLM's CPU build against the transformers backend, same model, same prompts, side by side.

An embedded model (--model: the default Qwen2.5-Coder-0.5B-Instruct, or smollm2; converted to
safetensors) answers --tasks CRUXEval output
prompts, n samples each at temperature 1.0, --max-tokens at most, through the ``vllm`` backend
(offline engine) and through the ``transformers`` backend (--threads torch threads). Prints each
one's start-up (engine or model load) and generated tokens/s, and the ratio. Runs in the vllm
venv only (``bash .ci/vllm-venv``):

    .venv-vllm/bin/python bench/vllm_cpu.py [--tasks 8] [--n 4] [--max-tokens 32] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factory.evaluate import load_benchmark  # noqa: E402
from factory.solvers.embedded import ensure_converted  # noqa: E402
from factory.solvers.transformers_backend import TransformersSolver  # noqa: E402
from factory.solvers.vllm_backend import VLLMSolver  # noqa: E402

CRUXEVAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the transformers backend")
    ap.add_argument("--model", default="embedded", help="an embedded model: embedded (Qwen) or smollm2")
    ap.add_argument("--dtype", default="bfloat16", help="vLLM's dtype (float32: no bf16 kernels needed)")
    ap.add_argument("--eager", action="store_true", help="vLLM without graph compilation")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    model = ensure_converted(args.model)
    prompts = [i["prompt"] for i in load_benchmark("cruxeval-o", CRUXEVAL, limit=args.tasks)[0]]
    sampling = (args.n, 1.0, 1.0, args.max_tokens, 0)

    t0 = time.monotonic()
    options = {"max_model_len": 2048, "dtype": args.dtype, "seed": 0, "enforce_eager": args.eager}
    engine = VLLMSolver(str(model), options)
    vllm_start = time.monotonic() - t0
    engine.generate(prompts[:1], 1, 1.0, 1.0, 4, 1)  # warm-up
    t0 = time.monotonic()
    out = engine.generate(prompts, *sampling)
    vllm_s = time.monotonic() - t0
    tok = engine.llm.get_tokenizer()
    vllm_tokens = sum(len(tok.encode(t, add_special_tokens=False)) for x in out for t in x)
    engine.close()

    t0 = time.monotonic()
    local = TransformersSolver(str(model), device="cpu", batch_size=4, threads=args.threads)
    hf_start = time.monotonic() - t0
    local.generate(prompts[:1], 1, 1.0, 1.0, 4, 1)  # warm-up
    before = local.generated_tokens
    t0 = time.monotonic()
    local.generate(prompts, *sampling)
    hf_s = time.monotonic() - t0
    hf_tokens = local.generated_tokens - before

    print(f"{args.tasks} prompts x n={args.n}, max {args.max_tokens} new tokens, temperature 1.0")
    print(f"{'backend':<14} {'start-up s':>10} {'generate s':>10} {'tokens':>7} {'tokens/s':>9}")
    for name, start, secs, tokens in (
        ("vllm (CPU)", vllm_start, vllm_s, vllm_tokens),
        ("transformers", hf_start, hf_s, hf_tokens),
    ):
        print(f"{name:<14} {start:10.1f} {secs:10.2f} {tokens:7d} {tokens / secs:9.1f}")
    print(f"ratio vllm/transformers tokens/s: {(vllm_tokens / vllm_s) / (hf_tokens / hf_s):.1f}x")


if __name__ == "__main__":
    main()
