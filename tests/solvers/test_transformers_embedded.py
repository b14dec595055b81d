"""The small embedded model (SmolLM2-135M) through the transformers backend: a real model on this CPU."""

from __future__ import annotations

import pytest

from factory.evaluate import evaluate, load_benchmark
from factory.solvers import CachedSolver, ResponseCache
from factory.solvers.embedded import MODELS, SMOLLM2, converted_dir, gguf_path
from factory.solvers.transformers_backend import TransformersSolver

SMOLLM2_ID = MODELS[SMOLLM2].model_id

pytestmark = pytest.mark.slow  # a real model generating on a shared 2-core CPU


@pytest.fixture(scope="module")
def smol(embedded_dir) -> TransformersSolver:
    return TransformersSolver(SMOLLM2, device="cpu", batch_size=2, threads=1)


def test_conversion_is_cached(embedded_dir) -> None:
    """The GGUF is converted once: a second ensure_converted rewrites nothing, and the cached
    weights load (how fast they load is a benchmark's business: bench/solvers_throughput.py)."""
    from factory.solvers.embedded import ensure_converted

    weights = embedded_dir / "model.safetensors"
    assert embedded_dir == converted_dir(MODELS[SMOLLM2], gguf_path(MODELS[SMOLLM2])) and weights.is_file()
    before = weights.stat()
    assert ensure_converted(SMOLLM2) == embedded_dir
    after = weights.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    TransformersSolver(str(embedded_dir), device="cpu")


def test_generate_shapes_and_determinism(smol: TransformersSolver) -> None:
    prompts = ["What is 2 + 3?", "Name a fruit.", "Say yes."]
    first = smol.generate(prompts, 2, 1.0, 1.0, 6, 11)
    assert [len(x) for x in first] == [2, 2, 2]
    assert smol.generate(prompts, 2, 1.0, 1.0, 6, 11) == first  # same seed, same texts
    greedy = smol.generate(prompts[:1], 2, 0.0, 1.0, 6, 0)
    assert greedy[0][0] == greedy[0][1]
    assert smol.model_id == SMOLLM2_ID


def test_eval_on_a_few_cruxeval_items_end_to_end(smol, cruxeval_path, tmp_path) -> None:
    items, _ = load_benchmark("cruxeval-o", cruxeval_path, limit=3)
    cached = CachedSolver(smol, ResponseCache(tmp_path / "c.sqlite"))
    report = evaluate(items, cached, n=2, temperature=1.0, max_tokens=12, seed=0)
    assert report["items"] == 3 and report["model"] == SMOLLM2_ID
    assert sum(report["samples"].values()) == 6
    questions = report["by_question_family"]["output"]  # one question per item: the samples' verdicts
    assert {v: questions[v] for v in report["samples"]} == report["samples"]
    calls = cached.model_calls
    assert evaluate(items, cached, n=2, temperature=1.0, max_tokens=12, seed=0) == report
    assert cached.model_calls == calls  # the rerun is answered from the cache
