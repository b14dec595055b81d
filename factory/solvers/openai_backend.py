"""Any OpenAI-compatible server (``vllm serve``, SGLang, ``transformers serve``, a hosted API).

Requests run concurrently on an asyncio loop (at most ``concurrency`` in flight), each with a
timeout; 429, 5xx, timeouts and dropped connections are retried with exponential backoff and
jitter. A server that returns fewer than n choices (many ignore ``n``) is asked again, with a new
seed each round, until n are in hand.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

from factory.errors import UserError
from factory.solvers.base import BaseSolver, Sampling

ENDPOINTS = ("chat", "completions")


class SolverRequestError(RuntimeError):
    """A request failed after every retry, or a server keeps returning no choices."""


class OpenAISolver(BaseSolver):
    """A model behind an OpenAI-compatible endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        endpoint: str = "chat",
        concurrency: int = 16,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
    ):
        try:
            import openai
        except ImportError:
            raise UserError(
                "the openai solver needs the openai package: pip install -e '.[solvers]'"
            ) from None
        if not model:
            raise UserError("the openai solver needs a model name (--model / difficulty.model)")
        if endpoint not in ENDPOINTS:
            raise UserError(f"endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
        if concurrency < 1 or timeout_s <= 0 or max_retries < 0 or backoff_s < 0:
            raise UserError(
                "concurrency >= 1, timeout_s > 0, max_retries >= 0 and backoff_s >= 0 are required"
            )
        self._openai = openai
        self.model_id = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers take any key
        self.endpoint = endpoint
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.requests = 0  # HTTP requests sent (retries and re-asks included)
        self.retries = 0

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        return asyncio.run(self._generate_all(prompts, n, sampling))

    async def _generate_all(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        # max_retries=0: retries are ours (counted, with our backoff), not the client's.
        client = self._openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0
        )
        limit = asyncio.Semaphore(self.concurrency)
        try:
            tasks = [self._one_prompt(client, limit, i, p, n, sampling) for i, p in enumerate(prompts)]
            return list(await asyncio.gather(*tasks))
        finally:
            await client.close()

    async def _one_prompt(
        self, client: Any, limit: asyncio.Semaphore, index: int, prompt: str, n: int, sampling: Sampling
    ) -> list[str]:
        texts: list[str] = []
        rounds = 2 * n + 2
        for round_ in range(rounds):
            seed = sampling.seed + 1_000_003 * index + round_  # a new seed per round: new samples
            async with limit:
                texts += await self._request(client, prompt, n - len(texts), sampling, seed)
            if len(texts) >= n:
                return texts[:n]
        raise SolverRequestError(f"{self.base_url}: only {len(texts)} of {n} choices after {rounds} requests")

    async def _request(self, client: Any, prompt: str, n: int, sampling: Sampling, seed: int) -> list[str]:
        openai = self._openai
        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
        common = {
            "model": self.model_id,
            "n": n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "seed": seed,
        }
        jitter = random.Random(seed)
        for attempt in range(self.max_retries + 1):
            self.requests += 1
            try:
                if self.endpoint == "chat":
                    reply = await client.chat.completions.create(
                        messages=[{"role": "user", "content": prompt}], **common
                    )
                    return [c.message.content or "" for c in reply.choices]
                reply = await client.completions.create(prompt=prompt, **common)
                return [c.text or "" for c in reply.choices]
            except retryable as exc:  # includes timeouts (APITimeoutError is a connection error)
                if attempt == self.max_retries:
                    raise SolverRequestError(
                        f"{self.base_url}: {type(exc).__name__} after {attempt + 1} tries"
                    ) from exc
                self.retries += 1
                await asyncio.sleep(self.backoff_s * 2**attempt * (0.5 + jitter.random()))
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                raise SolverRequestError(f"{self.base_url}: HTTP {exc.status_code}: {exc.message}") from exc
        raise AssertionError("unreachable")
