"""The inputs stage: reproducible Hypothesis draws, literal args, coverage-first choice."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import strategies as st
from pydantic import ValidationError

from factory.contracts import CASES_SCHEMA, PROGRAMS_SCHEMA
from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.pools import args_text
from factory.inputs.stage import choose, run_inputs_stage
from factory.inputs.strategies import strategy_for
from factory.io import ShardWriter, read_table
from factory.literals import parse_args, strict_equal
from factory.params import INPUT_CHECKS, ExecuteParams, InputsParams

GRAMMAR = load_grammar("grammars/python")


def test_draws_are_reproducible_from_the_seed() -> None:
    strategy = st.tuples(
        strategy_for(GRAMMAR, parse_type("list[int]")), strategy_for(GRAMMAR, parse_type("str"))
    )
    a = draw_examples(strategy, 10, seed=3)
    assert a == draw_examples(strategy, 10, seed=3)
    assert a != draw_examples(strategy, 10, seed=4)


def _bounds(spec: dict, low: str, high: str) -> tuple[int, int]:
    """The widest (low, high) over a spec's mixture branches (a plain spec is one branch; a
    ``just`` branch bounds with its value, or its length for sizes)."""
    branches = spec["of"] if spec["kind"] == "mixture" else [spec]

    def bound(branch: dict, key: str, default: int) -> int:
        if branch["kind"] == "just":
            value = branch["value"]
            return len(value) if key.endswith("_size") else value
        return branch.get(key, default)

    return min(bound(b, low, 0) for b in branches), max(bound(b, high, 0) for b in branches)


def test_type_specs_bound_the_drawn_values() -> None:
    # The strings' own spec (words, sentences) is checked in test_strategies.py.
    lists = draw_examples(strategy_for(GRAMMAR, parse_type("list[str]")), 30, seed=1)
    lo, hi = _bounds(GRAMMAR.types["list"].strategy, "min_size", "max_size")
    assert all(lo <= len(v) <= hi for v in lists)
    ints = draw_examples(strategy_for(GRAMMAR, parse_type("int")), 30, seed=1)
    lo, hi = _bounds(GRAMMAR.types["int"].strategy, "min_value", "max_value")
    assert all(lo <= v <= hi for v in ints)


def test_args_text_is_a_literal_that_parses_back() -> None:
    values = ([1, 2], "a'b\n", {"k": (1, 2)}, {3}, 1.5, True, b"\x00")
    text = args_text(values)
    assert strict_equal(parse_args(text), values)
    ast.parse(f"f({text})")


def test_choice_prefers_inputs_that_cover_new_lines() -> None:
    def run(lines: list[int], out: str, status: str = "ok") -> dict:
        return {"status": status, "lines": lines, "output_repr": out}

    candidates = ["a", "b", "c", "d", "e"]
    results = [
        run([1, 2], "1"),
        run([1, 2, 3], "2"),
        run([1, 4], "3"),
        run([], "", "error:KeyError"),
        run([1, 2, 3], "2"),
    ]
    chosen = choose(candidates, results, 2)
    assert [c for c, _ in chosen] == ["e", "c"]  # most lines first (the later draw on ties), then new lines
    assert choose(candidates[3:4], results[3:4], 2) == []


BRANCHY = "def f(n):\n    if n > 10:\n        return n - 10\n    return n\n"
FAILING = "def f(s):\n    return s.index('zzz')\n"
CONSTANT = "def f(n):\n    m = n * 0\n    return m\n"
ONE_SIDED = "def f(n):\n    if n * 0 > 1:\n        n = 0\n    return n + 1\n"
IRRELEVANT = "def f(n):\n    m = n + 1\n    k = m * 2\n    return n - 1\n"


def _program_rows(sources: tuple[str, ...] = (BRANCHY, FAILING)) -> list[dict]:
    rows = []
    for i, source in enumerate(sources):
        types = '[["s", "str"]]' if source == FAILING else '[["n", "int"]]'
        rows.append(
            {
                "program_id": f"p{i}",
                "index": i,
                "source": source,
                "entry": "f",
                "tier": 3 + i % 2,
                "target": "int.sub",
                "param_types": types,
                "n_lines": source.count("\n"),
                "grammar_hash": GRAMMAR.grammar_hash,
            }
        )
    return rows


def test_choice_prefers_new_if_outcomes_over_new_lines() -> None:
    def run(arcs: list[tuple[int, int]], lines: list[int], out: str) -> dict:
        return {"status": "ok", "arcs": arcs, "lines": lines, "output_repr": out}

    results = [
        run([(2, 3)], [1, 2, 3, 7, 8, 11], "1"),
        run([(2, 3)], [1, 2, 3, 9, 10], "2"),
        run([(2, 5)], [1, 2, 5], "3"),
    ]
    assert [c for c, _ in choose(["a", "b", "c"], results, 2, tests=[2])] == ["a", "c"]
    assert [c for c, _ in choose(["a", "b", "c"], results, 2)] == ["a", "b"]  # lines alone: b adds 9, 10
    assert choose(["a", "a"], results[:2], 2) == [("a", 6)]  # the same args are one candidate


def test_stage_keeps_covering_inputs_and_counts_programs_that_never_run(tmp_path: Path) -> None:
    with ShardWriter(tmp_path / "programs", PROGRAMS_SCHEMA) as w:
        w.write_many(_program_rows())
    params = InputsParams(per_program=2, candidates=20)
    stats = run_inputs_stage(
        1,
        params,
        ExecuteParams(workers=1),
        "grammars/python",
        tmp_path / "programs",
        tmp_path / "c",
        tmp_path / "s.json",
        spares_dir=tmp_path / "spares",
    ).to_dict()
    cases = read_table(tmp_path / "c").to_pylist()
    assert set(CASES_SCHEMA.names) <= set(cases[0])
    # The spares: the kept program's other candidates that ran, each once, with their outputs.
    spares = read_table(tmp_path / "spares").to_pylist()
    assert spares and {s["program_id"] for s in spares} == {"p0"}
    assert len({s["args"] for s in spares}) == len(spares) <= params.candidates - 2
    assert not {s["args"] for s in spares} & {c["args"] for c in cases}
    namespace: dict = {}
    exec(BRANCHY, namespace)
    for spare in spares:
        value = namespace["f"](int(spare["args"]))
        assert (spare["output_repr"], spare["output_type"]) == (repr(value), "int")
    branchy = [c for c in cases if c["program_id"] == "p0"]
    assert len(branchy) == 2
    taken = {int(c["args"]) > 10 for c in branchy}
    assert taken == {True, False}  # both branches covered
    assert stats["dropped"] == {"no_candidate_ran": 1}
    assert not [c for c in cases if c["program_id"] == "p1"]  # dropped: no case of it goes on
    assert stats["in"] == stats["out"] + stats["dropped_total"]
    again = run_inputs_stage(
        1,
        params,
        ExecuteParams(workers=1),
        "grammars/python",
        tmp_path / "programs",
        tmp_path / "c2",
        tmp_path / "s2.json",
    )
    assert again.items_out == stats["out"]
    assert read_table(tmp_path / "c2").to_pylist() == cases


def _stage(
    tmp_path: Path, programs: tuple[str, ...] | list[dict], **params: object
) -> tuple[dict, list[dict]]:
    """The inputs stage on ``programs`` (sources, or program rows): its stats and cases."""
    with ShardWriter(tmp_path / "programs", PROGRAMS_SCHEMA) as w:
        w.write_many(_program_rows(programs) if isinstance(programs, tuple) else programs)
    stats = run_inputs_stage(
        1,
        InputsParams(per_program=2, candidates=12, **params),  # type: ignore[arg-type]
        ExecuteParams(workers=2),
        "grammars/python",
        tmp_path / "programs",
        tmp_path / "c",
        tmp_path / "s.json",
    ).to_dict()
    return stats, read_table(tmp_path / "c").to_pylist()


def test_the_semantic_checks_drop_programs_and_count_them_per_tier(tmp_path: Path) -> None:
    stats, cases = _stage(tmp_path, (BRANCHY, CONSTANT, ONE_SIDED, IRRELEVANT))
    assert stats["dropped"] == {"constant_output": 1, "one_sided_branch": 1, "irrelevant_statement": 1}
    assert stats["dropped_by_tier"] == {
        "constant_output": {"4": 1},
        "irrelevant_statement": {"4": 1},
        "one_sided_branch": {"3": 1},
    }
    assert {c["program_id"] for c in cases} == {"p0"}
    assert stats["programs_kept_by_tier"] == {"3": 1}
    assert stats["programs_with_a_running_input_by_tier"] == {"3": 2, "4": 2}
    assert stats["checks"] == sorted(INPUT_CHECKS)
    assert stats["ablation_status"] == {"ok": 2}  # BRANCHY and IRRELEVANT: the others have no variant to try


def test_no_case_is_kept_whose_output_is_longer_than_the_bound(tmp_path: Path) -> None:
    # `'ab' * n` is 2n + 2 characters long: the bound leaves only the candidates with short outputs.
    repeat = "def f(n):\n    return 'ab' * n\n"
    bounded, cases = _stage(tmp_path / "bounded", (repeat,), checks=[], max_output_repr=12)
    unbounded, everything = _stage(tmp_path / "unbounded", (repeat,), checks=[])
    too_long = [stats["candidate_status"].get("output_too_long", 0) for stats in (unbounded, bounded)]
    assert too_long[0] < too_long[1]
    lengths = [len(repr("ab" * int(c["args"]))) for c in cases]
    assert cases and max(lengths) <= 12 < max(len(repr("ab" * int(c["args"]))) for c in everything)


def test_checks_not_named_in_the_params_do_not_run(tmp_path: Path) -> None:
    stats, cases = _stage(tmp_path, (CONSTANT, ONE_SIDED, IRRELEVANT), checks=["constant_output"])
    assert stats["dropped"] == {"constant_output": 1}
    assert {c["program_id"] for c in cases} == {"p1", "p2"}
    assert sum(c["program_id"] == "p2" for c in cases) == 2  # every kept input is written
    with pytest.raises(ValidationError):
        InputsParams(checks=["constant_output", "nope"])


BRANCHY_RENAMED = "def f(m):\n    if m > 10:\n        return m - 10\n    return m\n"
SHIFTED = "def f(n):\n    if n > 10:\n        return n - 11\n    return n\n"


def test_reserves_run_only_for_targets_left_short_and_a_renamed_copy_counts_once(tmp_path: Path) -> None:
    rows = _program_rows((BRANCHY, CONSTANT, BRANCHY_RENAMED, SHIFTED, BRANCHY))
    rows[1]["target"] = rows[3]["target"] = "int.mul"
    for row in rows[3:]:
        row["reserve"] = True  # a reserve of int.mul (p3), one of int.sub (p4)

    # int.mul kept nothing (its one program is constant): its reserve runs. int.sub kept two
    # programs that differ only in names, one shape: at least 1 runs no reserve, at least 2 does
    # (and its reserve, a third copy, leaves it short).
    stats, cases = _stage(tmp_path / "one", rows, min_programs_per_target=1)
    assert {c["program_id"] for c in cases} == {"p0", "p2", "p3"}
    assert stats["dropped"] == {"constant_output": 1, "reserve_unused": 1}
    assert stats["reserve_programs"] == {"run": 1, "kept": 1}
    assert stats["targets_short"] == []
    stats, cases = _stage(tmp_path / "two", rows, min_programs_per_target=2)
    assert {c["program_id"] for c in cases} == {"p0", "p2", "p3", "p4"}
    assert stats["reserve_programs"] == {"run": 2, "kept": 2}
    assert stats["targets_short"] == ["int.mul", "int.sub"]  # one shape each of two wanted
    assert stats["in"] == stats["out"] + stats["dropped_total"] == 5


def test_a_shape_counts_for_the_target_of_the_program_the_release_keeps(tmp_path: Path) -> None:
    # int.mul's one program is int.sub's renamed: the assemble stage keeps p0 (the least id) and
    # drops p1 as a near duplicate, so int.mul is short and runs its reserve.
    rows = _program_rows((BRANCHY, BRANCHY_RENAMED, SHIFTED))
    rows[1]["target"] = rows[2]["target"] = "int.mul"
    rows[2]["reserve"] = True
    stats, cases = _stage(tmp_path, rows, min_programs_per_target=1)
    assert {c["program_id"] for c in cases} == {"p0", "p1", "p2"}
    assert stats["reserve_programs"] == {"run": 1, "kept": 1}
    assert stats["targets_short"] == []


def _kept_after_ablation(source: str, candidates: list[str], greedy: list[str] | None = None) -> list[str]:
    """The kept inputs of a one-parameter program after its ablation job, when coverage had kept
    its first two candidates (``greedy``: what coverage keeps, checked first)."""
    from factory.inputs.stage import _ablate, _first_checks, _run_candidates
    from factory.languages import language
    from factory.quality.jobs import KINDS
    from factory.sandbox.trusted.pool import WorkerPool

    program = _program_rows((source,))[0]
    analysis = language("python").facet("analysis")
    with WorkerPool(workers=1, kinds=KINDS) as pool:
        runs = _run_candidates(pool, [program], [candidates], [[]], 2000)[0]
        judged = _first_checks(program, candidates, runs, frozenset(), 2, frozenset(INPUT_CHECKS), analysis)
        if greedy is not None:
            assert [judged.args[i] for i in judged.chosen] == greedy
        judged.chosen, judged.others = (0, 1), tuple(range(2, len(candidates)))
        _ablate(pool, [program], [judged], one_sided=True)
    assert judged.drop is None
    return [judged.args[i] for i in judged.chosen]


def test_a_statement_that_matters_on_one_rare_candidate_has_it_swapped_in() -> None:
    # `k + 1` changes the output only when n == 7; the coverage choice has no reason to keep that
    # input ("7" and "3": the most lines, then the later draw).
    rare = "def f(n):\n    k = n * 2\n    if n == 7:\n        k = k + 1\n    return k\n"
    # "7" swapped in; and "1" for "0", on which `n * 2` acts on nothing (0 * 2 == 0: inert_operation)
    assert _kept_after_ablation(rare, ["0", "1", "7", "3"], greedy=["7", "3"]) == ["1", "7"]


def test_an_operation_that_acts_on_no_candidate_does_not_hide_the_next_one() -> None:
    # `min(n, 10)` acts on none of the candidates; `abs(m)` acts on "-4" only, which coverage did
    # not keep: its pass-through still runs (the job stops only on a check that drops), "-4" comes in.
    source = "def f(n):\n    m = min(n, 10)\n    a = abs(m)\n    return a + 1\n"
    assert _kept_after_ablation(source, ["1", "2", "3", "-4"]) == ["1", "-4"]


def test_a_candidate_past_the_step_limit_is_not_kept_and_ends_the_later_passes() -> None:
    # The run of n=5000 passes 50 line events long before any timer: the program's later passes
    # do not run (as after a timeout, which a loaded machine could have reached first).
    from factory.inputs.stage import WAVES, _first_checks, _run_candidates
    from factory.languages import language
    from factory.quality.jobs import KINDS, TOO_MANY_STEPS
    from factory.sandbox.trusted.pool import WorkerPool

    loop = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
    program = _program_rows((loop,))[0]
    assert WAVES == (1, 3)
    candidates = ["3", "5000", "4", "2", "6", "7"]
    analysis = language("python").facet("analysis")
    with WorkerPool(workers=1, kinds=KINDS) as pool:
        runs = _run_candidates(pool, [program], [candidates], [[]], 50)[0]
    assert [r["status"] for r in runs] == ["ok", TOO_MANY_STEPS, "ok", "ok"]  # 6 and 7 never ran
    judged = _first_checks(program, candidates[: len(runs)], runs, frozenset(), 4, frozenset(), analysis)
    assert sorted(judged.args[i] for i in judged.chosen) == ["2", "3", "4"]


TWO_OUTPUTS = "def f(n):\n    if n > 10:\n        return 1\n    return 0\n"


def test_each_case_records_how_often_the_candidates_gave_its_output(tmp_path: Path) -> None:
    _, cases = _stage(tmp_path, (TWO_OUTPUTS, BRANCHY), checks=[])
    two = [c for c in cases if c["program_id"] == "p0"]
    assert sorted(int(c["args"]) > 10 for c in two) == [False, True]
    shares = [c["output_share"] for c in two]
    # Every candidate that ran gave one of the two outputs, both kept: their shares make 1.
    assert all(0 < s < 1 for s in shares) and sum(shares) == pytest.approx(1.0)
    branchy = [c["output_share"] for c in cases if c["program_id"] == "p1"]
    assert branchy and max(branchy) < 0.5, "n - 10 and n take many values: each output is rare"
