"""The one solver interface: ``generate(prompts, n, ...) -> n texts per prompt`` (docs/design.md §7)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypedDict


class SamplingDict(TypedDict):
    """``Sampling`` as a mapping: keyword arguments of ``BaseSolver.generate``."""

    temperature: float
    top_p: float
    max_tokens: int
    seed: int


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters; part of every cache key."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 256
    seed: int = 0

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    def to_dict(self) -> SamplingDict:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


def samples_asked(n: int, sampling: Sampling) -> int:
    """The samples per prompt a backend is asked for: one when greedy (all ``n`` are that text,
    and vLLM refuses ``n > 1`` when greedy), else ``n``."""
    return 1 if sampling.temperature == 0 else n


class BaseSolver(ABC):
    """A model that answers prompts; every backend (and the cache) is one. ``model_id`` names
    the model in cache keys and metadata; ``generate`` checks the arguments once and calls
    ``_generate`` with validated sampling params (and ``n=1`` when greedy)."""

    model_id: str
    #: True for a backend whose every call is costly to start (Ray Data starts its replicas, each
    #: loading the model, per call): a stage sends it all its prompts in one pass
    #: (``CachedSolver.prefetch``).
    one_pass: bool = False

    def generate(
        self,
        prompts: Sequence[str],
        n: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 256,
        seed: int = 0,
    ) -> list[list[str]]:
        """``n`` completions for each prompt, in prompt order (greedy when temperature is 0)."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if isinstance(prompts, str):
            raise TypeError("prompts must be a sequence of strings, not one string")
        sampling = Sampling(temperature, top_p, max_tokens, seed)
        asked = samples_asked(n, sampling)
        if asked < n:
            return [samples * n for samples in self._generate(list(prompts), asked, sampling)]
        return self._generate(list(prompts), n, sampling)

    def stream(
        self, batches: Sequence[Sequence[str]], n: int, sampling: Sampling
    ) -> Iterator[tuple[int, list[list[str]]]]:
        """The completions of every batch, each as soon as it is ready: (index in ``batches``,
        ``n`` texts per prompt of that batch). Here one ``generate`` call per batch, in order; a
        backend that spreads the batches over workers yields them as they come back."""
        for index, batch in enumerate(batches):
            yield index, self.generate(batch, n, **sampling.to_dict())

    def close(self) -> None:
        """Release what the backend holds (an engine's processes, a cluster connection); here
        nothing."""
        return None

    @abstractmethod
    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """The backend's own generation; ``prompts`` and ``sampling`` are already checked."""


Solver = BaseSolver
