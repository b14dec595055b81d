"""An on-disk response cache (sqlite) in front of any solver.

A response is keyed by (model, prompt, sampling params, sample index), so a rerun, a crash or a
change downstream never asks the model twice: only prompts with a missing sample go to the
backend, in chunks that are committed as they come back.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from factory.progress import progress
from factory.solvers.base import BaseSolver, Sampling, Solver, samples_asked


def default_cache_dir() -> Path:
    """The user's cache directory for execverify (``$XDG_CACHE_HOME/execverify``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "execverify"


def response_key(model_id: str, prompt: str, sampling: Sampling, index: int) -> str:
    """The cache key of sample ``index`` of ``prompt``."""
    text = json.dumps([model_id, prompt, sampling.to_dict(), index], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseCache:
    """A sqlite table of responses; safe to share between processes (WAL)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses"
            " (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL)"
        )
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):  # sqlite's bound-parameter limit
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, text FROM responses WHERE key IN ({marks})", chunk)
            found.update(rows.fetchall())
        return found

    def put_many(self, model_id: str, items: Sequence[tuple[str, str]]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO responses (key, model, text) VALUES (?, ?, ?)",
            [(k, model_id, t) for k, t in items],
        )
        self._db.commit()


class CachedSolver(BaseSolver):
    """A solver that answers from the cache and asks the backend only for what is missing.

    ``backend`` is a solver, or a function that builds one (with ``model_id`` given): then the
    model is loaded only when something is missing, so a fully cached run needs no model at all.
    ``model_calls`` counts the batches the backend answered and ``prompts_asked`` the prompts sent
    (tests and the stage stats read them); the missing prompts of a ``generate`` call go in
    batches of ``chunk``, each committed as it comes back. ``one_pass`` (taken from ``backend``
    when it is a solver): the backend should get all of a stage's prompts in one pass, which the
    stage makes with ``prefetch``.
    """

    def __init__(
        self,
        backend: Solver | Callable[[], Solver],
        cache: ResponseCache,
        chunk: int = 32,
        label: str = "solver",
        model_id: str | None = None,
        one_pass: bool = False,
    ):
        if isinstance(backend, BaseSolver):
            self._backend: Solver | None = backend
            self._factory = None
            model_id = model_id or backend.model_id
            one_pass = backend.one_pass
        else:
            if model_id is None:
                raise ValueError("a lazily built backend needs its model_id")
            self._backend, self._factory = None, backend
        self.model_id: str = model_id
        self.one_pass = one_pass
        self.cache = cache
        self.chunk = max(1, chunk)
        self.label = label
        self.model_calls = 0
        self.prompts_asked = 0
        self.cache_hits = 0
        self._prefetched = False

    def prefetch(self, rounds: Iterable[Sequence[str]], n: int, sampling: Sampling) -> None:
        """For a ``one_pass`` backend: ask it now, in one pass, for every missing response of
        ``rounds``, the prompts of the stage's ``generate`` calls to come, in order. The batches
        are the ones those calls would send (each call's missing prompts in batches of ``chunk``),
        so the backend sees the calls of the local path, and the counters end as they would.
        The later ``generate`` calls are answered from the cache. Otherwise nothing."""
        if not self.one_pass:
            return
        n = samples_asked(n, sampling)  # what ``generate`` will ask for
        batches: list[list[str]] = []
        planned: set[str] = set()  # prompts an earlier round asks for: cache hits by then
        for prompts in rounds:
            unique = list(dict.fromkeys(prompts))
            keys = self._keys(unique, n, sampling)
            known = self.cache.get_many([k for ks in keys.values() for k in ks])
            missing = [p for p in unique if p not in planned and any(k not in known for k in keys[p])]
            self.cache_hits += sum(k in known or p in planned for p, ks in keys.items() for k in ks)
            batches += [missing[i : i + self.chunk] for i in range(0, len(missing), self.chunk)]
            planned.update(missing)
        self._ask(batches, n, sampling, None)
        self._prefetched = True

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """``n`` completions per prompt, from the cache where present."""
        unique = list(dict.fromkeys(prompts))
        keys = self._keys(unique, n, sampling)
        known = self.cache.get_many([k for ks in keys.values() for k in ks])
        missing = [p for p in unique if any(k not in known for k in keys[p])]
        if not self._prefetched:  # counted by the prefetch
            self.cache_hits += sum(k in known for ks in keys.values() for k in ks)
        self._ask(
            [missing[i : i + self.chunk] for i in range(0, len(missing), self.chunk)], n, sampling, known
        )
        return [[known[k] for k in keys[p]] for p in prompts]

    def _keys(self, prompts: list[str], n: int, sampling: Sampling) -> dict[str, list[str]]:
        return {p: [response_key(self.model_id, p, sampling, i) for i in range(n)] for p in prompts}

    def _ask(
        self, batches: list[list[str]], n: int, sampling: Sampling, known: dict[str, str] | None
    ) -> None:
        """Ask the backend for ``batches``, committing each batch to the cache as it comes back
        (in any order), and adding its responses to ``known`` when given; a response already
        cached is kept (the backend's repeat of it is dropped)."""
        if not batches:
            return
        answered: set[int] = set()
        with progress(f"{self.label} ({self.model_id})", sum(map(len, batches))) as advance:
            for index, texts in self.backend.stream(batches, n, sampling):
                batch = batches[index]
                new = [
                    (response_key(self.model_id, prompt, sampling, i), text)
                    for prompt, samples in zip(batch, texts, strict=True)
                    for i, text in enumerate(samples)
                ]
                if len(new) != n * len(batch) or index in answered:
                    raise RuntimeError(
                        f"{self.label} ({self.model_id}): the backend answered batch {index} wrongly"
                    )
                self.cache.put_many(self.model_id, new)
                if known is not None:
                    for key, text in new:
                        known.setdefault(key, text)
                answered.add(index)
                self.model_calls += 1
                self.prompts_asked += len(batch)
                advance(len(batch))
        if len(answered) != len(batches):
            raise RuntimeError(
                f"{self.label} ({self.model_id}): the backend left "
                f"{len(batches) - len(answered)} batches unanswered"
            )

    @property
    def backend(self) -> Solver:
        """The backend, built on first use."""
        if self._backend is None:
            assert self._factory is not None
            self._backend = self._factory()
        return self._backend

    def close(self) -> None:
        """Close the backend, if it was built (the model, the Ray connection)."""
        if self._backend is not None:
            self._backend.close()
