"""The inputs stage's semantic checks on candidate runs: constant output, one-sided tests, and the
choice of kept inputs that passes them."""

from __future__ import annotations

from typing import Any

from factory.params import INPUT_CHECKS
from factory.quality import checks
from factory.quality.ablation import Ablation


def run(out: str, arcs: list[tuple[int, int]] = (), lines: list[int] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"status": "ok", "output_repr": out, "arcs": list(arcs), "lines": list(lines)}


def test_the_check_names_are_the_params_names() -> None:
    names = (checks.CONSTANT_OUTPUT, checks.ONE_SIDED_BRANCH, checks.IRRELEVANT_STATEMENT)
    variants = (checks.IDLE_REPETITION, checks.IRRELEVANT_TEST, checks.INERT_OPERATION)
    assert (*names, *variants) == INPUT_CHECKS
    assert checks.PREFERENCES < set(INPUT_CHECKS)


def ablation(*changed: tuple[int, ...] | None) -> Ablation:
    return Ablation(tuple(range(len(changed))), ("",) * len(changed), changed, True)


STATEMENT, TEST, INERT = checks.IRRELEVANT_STATEMENT, checks.IRRELEVANT_TEST, checks.INERT_OPERATION


def test_the_drop_reason_is_that_of_the_first_variant_that_changed_nothing() -> None:
    # two removals, then one negated test
    reasons = (STATEMENT, STATEMENT, TEST)
    assert checks.irrelevant_reason(ablation((0,), (1,), ()), reasons) == TEST
    assert checks.irrelevant_reason(ablation((), (1,), ()), reasons) == STATEMENT
    assert checks.irrelevant_reason(ablation((), (1,), (0,)), reasons) == STATEMENT
    # every variant changed something (no choice of the inputs covers them all): a statement
    assert checks.irrelevant_reason(ablation((0,), (1,), (2,)), reasons) == STATEMENT
    assert checks.irrelevant_reason(ablation((0,), None, ()), reasons) == TEST
    assert checks.irrelevant_reason(ablation((0,), (), ()), (STATEMENT, checks.IDLE_REPETITION, TEST)) == (
        checks.IDLE_REPETITION
    )
    # a pass-through that changed nothing is never the reason
    assert checks.irrelevant_reason(ablation((0,), (), ()), (STATEMENT, INERT, TEST)) == TEST
    assert checks.irrelevant_reason(ablation((0,), ()), (STATEMENT, INERT)) == STATEMENT


def test_an_inert_operation_steers_the_choice_and_never_drops() -> None:
    tests: set[int] = set()
    runs = [run(str(i)) for i in range(4)]
    chosen, others = (0, 1), (2, 3)
    reasons = (STATEMENT, INERT)
    # The operation acts on kept input 1: the choice stays.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), (1,)), reasons) == chosen
    # It acts only on candidate 3 (job index 3): swapped in for 1, the statement still matters on 0.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), (3,)), reasons) == (0, 3)
    # It acts on no candidate, or only where the statement then matters nowhere: the choice stays.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), ()), reasons) == chosen
    squeezed = ablation((0,), (1,), (2,), (3,))
    assert (
        checks.relevant_choice(runs, tests, chosen, others, squeezed, (STATEMENT, STATEMENT, INERT, INERT))
        == chosen
    )
    # A removal that changes nothing still drops the program.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((), (1,)), reasons) is None


def test_constant_output_needs_two_runs_with_one_output() -> None:
    assert checks.constant_output([run("1"), run("1"), run("1")])
    assert not checks.constant_output([run("1"), run("2")])
    assert not checks.constant_output([run("1")])  # one run says nothing about variation


def test_a_test_is_one_sided_when_one_line_always_follows_it() -> None:
    tests = {2, 5}
    a = run("1", [(2, 3), (3, 0)])
    b = run("2", [(2, 4), (4, 5), (5, 6)])
    assert checks.one_sided([a], tests) == [2]
    assert checks.one_sided([a, b], tests) == [5]  # 2 went both ways; 5 was reached one way only
    assert checks.one_sided([a, b, run("3", [(5, 0)])], tests) == []
    assert checks.one_sided([run("1", [(7, 8)])], tests) == []  # line 7 is no test


def test_rank_prefers_new_branch_outcomes_then_new_lines() -> None:
    tests = {2}
    runs = [
        run("1", [(2, 3)], [1, 2, 3, 9, 10, 11]),  # the most lines
        run("2", [(2, 3)], [1, 2, 3]),
        run("3", [(2, 4)], [1, 2, 4]),  # the other outcome
    ]
    order = checks.rank(runs, tests)
    assert order[:2] == [0, 2]  # then the other outcome of line 2 (run 1 adds nothing)
    # Without tests it is line coverage, and on a tie the later draw.
    assert checks.rank([run("1", (), [1]), run("2", (), [1])], set()) == [1, 0]
    # ... but first an output that is not long (no longer than LONG_OUTPUT_CHARS)
    long, short = "'" + "a" * checks.LONG_OUTPUT_CHARS + "'", "'ab'"
    assert checks.rank([run(short, (), [1]), run(long, (), [1])], set()) == [0, 1]
    assert checks.rank([run(short, (), [1]), run("'abc'", (), [1])], set()) == [1, 0]


def test_two_sided_choice_searches_past_the_greedy_choice() -> None:
    tests = {2, 6}
    runs = [
        run("1", [(2, 3), (6, 7)], [1, 2, 3, 4, 5, 6, 7]),
        run("2", [(2, 3), (6, 8)], [1, 2, 3, 6, 8]),
        run("3", [(2, 4)], [1, 2, 4]),  # reaches only the first test
    ]
    order = checks.rank(runs, tests)
    assert order[:2] == [0, 1]  # the most lines, then a new outcome of line 6 and a new line
    assert checks.one_sided([runs[i] for i in order[:2]], tests) == [2]
    assert checks.two_sided_choice(runs, tests, order, 2) is None  # no pair makes both two-sided
    choice = checks.two_sided_choice(runs, tests, order, 3)
    assert choice is not None and sorted(choice) == [0, 1, 2]
    assert checks.two_sided_choice(runs[:2], tests, [0, 1], 2) is None  # test 2 never goes to 4


def test_relevant_choice_keeps_swaps_or_gives_up() -> None:
    tests: set[int] = set()
    runs = [run(str(i)) for i in range(4)]
    chosen, others = (0, 1), (2, 3)

    def ablation(*changed: tuple[int, ...] | None) -> Ablation:
        return Ablation(
            lines=tuple(range(len(changed))), sources=("",) * len(changed), changed=changed, complete=True
        )

    # Every statement matters on a kept input (job indices: 0, 1 kept; 2, 3 the others).
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), (1,))) == chosen
    # The second statement matters only on candidate 3 (job index 3): it is swapped in for 1.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), (3,))) == (0, 3)
    # Both kept inputs carry a statement of their own: no swap keeps them all.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), (1,), (2,))) is None
    # A statement that matters on no candidate at all.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), ())) is None
    # A statement not run (budget) is not held against the program.
    assert checks.relevant_choice(runs, tests, chosen, others, ablation((0,), None)) == chosen


def test_a_swap_must_keep_every_test_two_sided() -> None:
    tests = {2}
    runs = [run("0", [(2, 3)]), run("1", [(2, 4)]), run("2", [(2, 3)]), run("3", [(2, 3)])]
    changed: tuple[tuple[int, ...] | None, ...] = ((0,), (2,))  # the second statement: candidate 2 only
    result = Ablation(lines=(1, 2), sources=("", ""), changed=changed, complete=True)
    # Swapping 2 in for 1 would leave test 2 one-sided; swapping it for 0 loses the first statement.
    assert checks.relevant_choice(runs, tests, (0, 1), (2, 3), result) is None
    # With three kept inputs there is room: candidate 2 (job index 3) replaces candidate 4.
    runs.append(run("4", [(2, 3)]))
    wide = Ablation(lines=(1, 2), sources=("", ""), changed=((0,), (3,)), complete=True)
    assert checks.relevant_choice(runs, tests, (0, 1, 4), (2, 3), wide) == (0, 1, 2)
