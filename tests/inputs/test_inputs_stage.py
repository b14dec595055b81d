"""The inputs stage: reproducible Hypothesis draws, literal args, coverage-first choice."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import strategies as st

from factory.contracts import CASES_SCHEMA, PROGRAMS_SCHEMA
from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.pools import args_text
from factory.inputs.stage import choose, run_inputs_stage
from factory.inputs.strategies import strategy_for
from factory.io import ShardWriter, read_table
from factory.literals import parse_args, strict_equal
from factory.params import ExecuteParams, InputsParams

GRAMMAR = load_grammar("grammars/python")


def test_draws_are_reproducible_from_the_seed() -> None:
    strategy = st.tuples(
        strategy_for(GRAMMAR, parse_type("list[int]")), strategy_for(GRAMMAR, parse_type("str"))
    )
    a = draw_examples(strategy, 10, seed=3)
    assert a == draw_examples(strategy, 10, seed=3)
    assert a != draw_examples(strategy, 10, seed=4)


def test_type_specs_bound_the_drawn_values() -> None:
    lists = draw_examples(strategy_for(GRAMMAR, parse_type("list[str]")), 30, seed=1)
    spec = GRAMMAR.types["list"].strategy
    assert all(spec["min_size"] <= len(v) <= spec["max_size"] for v in lists)
    elem = GRAMMAR.types["str"].element_strategy
    assert all(elem["min_size"] <= len(s) <= elem["max_size"] for v in lists for s in v)
    ints = draw_examples(strategy_for(GRAMMAR, parse_type("int")), 30, seed=1)
    lo, hi = GRAMMAR.types["int"].strategy["min_value"], GRAMMAR.types["int"].strategy["max_value"]
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


def _program_rows() -> list[dict]:
    source_branchy = "def f(n):\n    if n > 10:\n        return n - 10\n    return n\n"
    source_failing = "def f(s):\n    return s.index('zzz')\n"
    rows = []
    for i, (source, types) in enumerate(
        [(source_branchy, '[["n", "int"]]'), (source_failing, '[["s", "str"]]')]
    ):
        rows.append(
            {
                "program_id": f"p{i}",
                "index": i,
                "source": source,
                "entry": "f",
                "tier": 3,
                "target": "int.sub",
                "param_types": types,
                "n_lines": 4,
                "grammar_hash": GRAMMAR.grammar_hash,
            }
        )
    return rows


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
    ).to_dict()
    cases = read_table(tmp_path / "c").to_pylist()
    assert set(CASES_SCHEMA.names) <= set(cases[0])
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


def test_args_text_does_not_depend_on_the_hash_seed() -> None:
    import subprocess
    import sys

    values = "({'ab', 'cd', 'ef', 'gh', 'x'}, {1: {'q', 'r'}})"
    code = f"from factory.inputs.pools import args_text; print(args_text({values}))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": str(seed)},
            check=True,
        ).stdout
        for seed in (1, 2, 3, 4)
    }
    assert len(outs) == 1


def test_draws_do_not_depend_on_the_modules_imported() -> None:
    """Hypothesis mixes in constants from imported local modules; our draws must not see them."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys, types, pathlib, tempfile
        if sys.argv[1] == "with":
            # A local module full of float and str constants, imported before drawing.
            d = pathlib.Path(tempfile.mkdtemp())
            floats = ", ".join(repr(i / 7) for i in range(300))
            strings = ", ".join(repr(f"zz{i}") for i in range(300))
            (d / "noise_consts.py").write_text(f"A = [{floats}]\\nB = [{strings}]\\n")
            sys.path.insert(0, str(d)); import noise_consts
        from hypothesis import strategies as st
        from factory.inputs.draw import draw_examples
        s = st.tuples(st.floats(-100, 100, width=16), st.text("abc", max_size=8), st.integers(0, 20))
        print(repr(draw_examples(s, 200, 7)))
        """
    )
    outs = [
        subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, check=True).stdout
        for arg in ("without", "with")
    ]
    assert outs[0] == outs[1]


def test_pools_are_drawn_the_same_in_parallel_and_saved_for_later_stages(tmp_path: Path) -> None:
    from factory.inputs.pools import draw_pools, read_pools, write_pools

    with ShardWriter(tmp_path / "programs", PROGRAMS_SCHEMA) as w:
        w.write_many(_program_rows())
    one = draw_pools(tmp_path / "programs", "grammars/python", seed=5, pool_size=40, workers=1)
    two = draw_pools(tmp_path / "programs", "grammars/python", seed=5, pool_size=40, workers=2)
    assert one == two and one and all(one.values())
    assert draw_pools(tmp_path / "programs", "grammars/python", seed=6, pool_size=40, workers=1) != one
    write_pools(one, tmp_path / "pools")
    assert read_pools(tmp_path / "pools") == one
