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
from factory.solvers.base import BaseSolver, Sampling, Solver


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
    ``model_calls`` counts the chunks the backend answered and ``prompts_asked`` the prompts sent
    (tests and the stage stats read them); ``chunk`` prompts go per chunk, each committed as it
    comes back. ``one_pass`` (taken from ``backend`` when it is a solver): the backend should get
    all of a stage's prompts in one call, which the stage makes with ``prefetch``.
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

    def prefetch(self, prompts: Iterable[str], n: int, sampling: Sampling) -> None:
        """For a ``one_pass`` backend: ask it now, in one call, for every missing response of
        ``prompts``; the caller's later ``generate`` calls for them are answered from the cache
        (their hits are not counted again). Otherwise nothing: the backend answers as asked."""
        if not self.one_pass:
            return
        self._fill(list(dict.fromkeys(prompts)), n, sampling)
        self._prefetched = True

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """``n`` completions per prompt, from the cache where present."""
        known, keys = self._fill(list(dict.fromkeys(prompts)), n, sampling, count_hits=not self._prefetched)
        return [[known[k] for k in keys[p]] for p in prompts]

    def _fill(
        self, unique: list[str], n: int, sampling: Sampling, count_hits: bool = True
    ) -> tuple[dict[str, str], dict[str, list[str]]]:
        """The responses of ``unique`` by key (asking the backend for the missing ones, each
        chunk committed as it comes back) and the keys of each prompt."""
        keys = {p: [response_key(self.model_id, p, sampling, i) for i in range(n)] for p in unique}
        known = self.cache.get_many([k for ks in keys.values() for k in ks])
        missing = [p for p in unique if any(k not in known for k in keys[p])]
        if count_hits:
            self.cache_hits += sum(k in known for ks in keys.values() for k in ks)
        if missing:
            with progress(f"{self.label} ({self.model_id})", len(missing)) as advance:
                for answered in self.backend.stream(missing, n, sampling, self.chunk):
                    self.model_calls += 1
                    self.prompts_asked += len(answered)
                    new = []
                    for position, samples in answered:
                        for key, text in zip(keys[missing[position]], samples, strict=True):
                            if key not in known:
                                known[key] = text
                                new.append((key, text))
                    self.cache.put_many(self.model_id, new)
                    advance(len(answered))
            if any(k not in known for p in missing for k in keys[p]):
                raise RuntimeError(f"{self.label} ({self.model_id}): the backend left prompts unanswered")
        return known, keys

    @property
    def backend(self) -> Solver:
        """The backend, built on first use."""
        if self._backend is None:
            assert self._factory is not None
            self._backend = self._factory()
        return self._backend
