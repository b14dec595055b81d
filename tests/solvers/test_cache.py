"""The response cache: keyed by model, prompt, sampling params and sample index; survives reopening."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.solvers import CachedSolver, ResponseCache, make_solver
from factory.solvers.base import BaseSolver, Sampling


class CountingSolver(BaseSolver):
    """A TEST DOUBLE: deterministic texts that name the prompt, the sample and the params."""

    model_id = "counting-test-double"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        self.calls.append(list(prompts))
        t, seed = sampling.temperature, sampling.seed
        return [[f"{p}|{i}|{t}|{seed}|call{len(self.calls)}" for i in range(n)] for p in prompts]


def test_second_run_asks_nothing_and_returns_the_same(tmp_path: Path) -> None:
    backend = CountingSolver()
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"), chunk=2)
    first = solver.generate(["a", "b", "c", "a"], 3, 1.0, 1.0, 16, 7)
    assert len(backend.calls) == 2  # 3 distinct prompts in chunks of 2
    assert [len(s) for s in first] == [3, 3, 3, 3] and first[0] == first[3]
    again = CachedSolver(CountingSolver(), ResponseCache(tmp_path / "c.sqlite"))  # a new process
    assert again.generate(["c", "a", "b"], 3, 1.0, 1.0, 16, 7) == [first[2], first[0], first[1]]
    assert again.model_calls == 0 and again.cache_hits == 9


def test_keys_separate_params_models_and_sample_indices(tmp_path: Path) -> None:
    backend = CountingSolver()
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"))
    solver.generate(["p"], 2, 1.0, 1.0, 16, 0)
    for args in [(1.0, 1.0, 16, 1), (0.5, 1.0, 16, 0), (1.0, 0.9, 16, 0), (1.0, 1.0, 17, 0)]:
        solver.generate(["p"], 2, *args)
    assert len(backend.calls) == 5
    solver.generate(["p"], 3, 1.0, 1.0, 16, 0)  # sample 2 is new; 0 and 1 stay as they were
    out = solver.generate(["p"], 3, 1.0, 1.0, 16, 0)
    assert len(backend.calls) == 6
    assert out[0][0].endswith("call1") and out[0][2].endswith("call6")


def test_greedy_asks_for_one_sample_and_repeats_it(tmp_path: Path) -> None:
    backend = CountingSolver()
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"))
    out = solver.generate(["p", "q"], 3, 0.0, 1.0, 16, 0)
    assert out == [["p|0|0.0|0|call1"] * 3, ["q|0|0.0|0|call1"] * 3]
    assert solver.generate(["p"], 2, 0.0, 1.0, 16, 0) == [["p|0|0.0|0|call1"] * 2]
    assert len(backend.calls) == 1 and solver.cache_hits == 1  # one key per greedy prompt


def test_lazy_backend_is_built_only_when_something_is_missing(tmp_path: Path) -> None:
    built = []

    def build() -> CountingSolver:
        built.append(1)
        return CountingSolver()

    cache = ResponseCache(tmp_path / "c.sqlite")
    CachedSolver(build, cache, model_id="counting-test-double").generate(["x"], 1)
    assert built == [1]
    CachedSolver(build, cache, model_id="counting-test-double").generate(["x"], 1)
    assert built == [1]


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    solver = CachedSolver(CountingSolver(), ResponseCache(tmp_path / "c.sqlite"))
    with pytest.raises(ValueError, match="n must be"):
        solver.generate(["x"], 0)
    with pytest.raises(TypeError):
        solver.generate("x", 1)
    with pytest.raises(ValueError, match="top_p"):
        Sampling(top_p=0)
    from factory.errors import UserError

    with pytest.raises(UserError, match="unknown solver"):
        make_solver("llama", "m", tmp_path / "c.sqlite")


def test_prefetch_sends_the_batches_of_the_calls_to_come_and_they_ask_nothing(tmp_path: Path) -> None:
    rounds = [["a", "b", "c", "a", "d"], ["b", "e"], ["f", "a"]]
    sampling = Sampling(1.0, 1.0, 16, 7)
    local_backend = CountingSolver()
    local = CachedSolver(local_backend, ResponseCache(tmp_path / "local.sqlite"), chunk=2)
    expected = [local.generate(prompts, 2, **sampling.to_dict()) for prompts in rounds]
    one_pass_backend = CountingSolver()
    one_pass_backend.one_pass = True  # as a Ray backend: the stage prefetches
    solver = CachedSolver(one_pass_backend, ResponseCache(tmp_path / "c.sqlite"), chunk=2)
    solver.prefetch(rounds, 2, sampling)
    # the batches the rounds' calls send locally: their missing prompts, in chunks of 2
    assert one_pass_backend.calls == local_backend.calls == [["a", "b"], ["c", "d"], ["e"], ["f"]]
    assert [solver.generate(prompts, 2, **sampling.to_dict()) for prompts in rounds] == expected
    assert len(one_pass_backend.calls) == 4  # the calls were answered from the cache
    counters = (solver.model_calls, solver.prompts_asked, solver.cache_hits)
    assert counters == (local.model_calls, local.prompts_asked, local.cache_hits) == (4, 6, 4)


def test_prefetch_of_a_greedy_stage_asks_one_sample(tmp_path: Path) -> None:
    backend = CountingSolver()
    backend.one_pass = True
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"))
    solver.prefetch([["p", "q"]], 3, Sampling(0.0, 1.0, 16, 0))
    assert solver.generate(["p"], 3, 0.0, 1.0, 16, 0) == [["p|0|0.0|0|call1"] * 3]
    assert backend.calls == [["p", "q"]] and solver.cache_hits == 0


def test_prefetch_does_nothing_for_a_backend_asked_as_it_goes(tmp_path: Path) -> None:
    backend = CountingSolver()
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"))
    solver.prefetch([["p", "q"]], 2, Sampling())
    assert backend.calls == [] and solver.model_calls == 0
