"""vLLM's offline engine in-process (``LLM.generate`` with ``SamplingParams(n=...)``): the GPU path.

vllm is imported lazily (the ``vllm`` extra; it is not installed by the other extras), so the
rest of the package works without it. ``sampling_kwargs`` is the argument mapping, kept apart
so that it can be checked where vllm cannot run.
"""

from __future__ import annotations

from typing import Any

from factory.errors import UserError
from factory.solvers.base import BaseSolver, Sampling, samples_asked
from factory.solvers.embedded import MODELS, ensure_converted


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def sampling_kwargs(n: int, sampling: Sampling) -> dict[str, Any]:
    """The ``vllm.SamplingParams`` arguments for n samples (greedy when temperature is 0). vLLM
    refuses ``n > 1`` when greedy; ``generate`` asks greedy for one sample anyway."""
    return {
        "n": samples_asked(n, sampling),
        "temperature": sampling.temperature,
        "top_p": sampling.top_p if sampling.temperature > 0 else 1.0,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed,
    }


class VLLMSolver(BaseSolver):
    """A model in vLLM's offline engine; prompts go through the tokenizer's chat template."""

    def __init__(self, model: str, engine_kwargs: dict[str, Any] | None = None):
        if not model:
            raise UserError(
                "the vllm solver needs a model (a Hub id, a local folder or embedded), e.g. --model Qwen/..."
            )
        try:
            import vllm
        except ImportError:
            raise UserError("the vllm solver needs vllm on a GPU machine: pip install -e '.[vllm]'") from None
        self._vllm = vllm
        self.model_id = model
        kwargs = dict(engine_kwargs or {})
        if model in MODELS:  # an embedded model: its converted folder
            model = str(ensure_converted(model))
            if not _has_gpu():
                # On a CPU, fp32 without graph compilation: with bf16 and the compiled graph the
                # embedded Qwen took 27 s for its first 4 tokens and 16 prompts did not finish in
                # 3 minutes; fp32 and eager: 17 tokens/s on 2 cores (bench/README.md).
                kwargs = {"dtype": "float32", "enforce_eager": True, "max_model_len": 4096, **kwargs}
        self.llm = vllm.LLM(model=model, **kwargs)

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """``n`` completions per prompt in one engine call (vLLM batches and schedules)."""
        params = self._vllm.SamplingParams(**sampling_kwargs(n, sampling))
        conversations = [[{"role": "user", "content": p}] for p in prompts]
        outputs = self.llm.chat(conversations, params, use_tqdm=True)
        return [[c.text for c in out.outputs] for out in outputs]

    def close(self) -> None:
        """Stop the engine's processes now (otherwise they live until the interpreter exits)."""
        self.llm.llm_engine.engine_core.shutdown()
