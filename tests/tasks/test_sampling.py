"""Question sampling: counts, informative lines first, -1/Nil shares, trivial only when straight."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from factory.tasks.questions import questions_from_trace
from factory.tasks.sampling import (
    STRAIGHT_LINE_TRIVIAL,
    is_straight_line,
    is_trivial,
    sample_coverage,
    sample_questions,
    special_quota,
    weight,
)
from factory.trace import trace_call

CRUXEVAL = Path(__file__).resolve().parents[2] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"

LOOPS = """def helper(a):
    return a * 2

def f(xs):
    total = 0
    count = 0
    for x in xs:
        if x > 1:
            total += helper(x)
        else:
            total -= 1
        count += 1
    return total + count
"""
STRAIGHT = """def f(a, b):
    c = a + b
    d = c * 2
    e = d - a
    return [c, d, e]
"""


def all_questions(source: str, args: str) -> list[dict]:
    trace = trace_call(source, "f", args)
    assert trace["status"] == "ok"
    return questions_from_trace(source, trace)


def test_counts_and_order() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5]")
    nl, st = sample_questions(qs, random.Random(1))
    assert len(nl) == 5 and len(st) == 5
    assert all(q["family"] == "next_line" for q in nl)
    assert all(q["family"] == "state" for q in st)
    assert nl == sorted(nl, key=lambda q: (q["line"], q["occurrence"]))
    nl, st = sample_questions(qs, random.Random(1), next_line=2, state=0)
    assert len(nl) == 2 and st == []
    nl, st = sample_questions(qs, random.Random(1), next_line=50, state=50)
    keys = [(q["line"], q["occurrence"]) for q in nl]
    assert len(keys) == len(set(keys))


def test_deterministic_given_the_rng() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5]")
    a = sample_questions(qs, random.Random("42:case"))
    b = sample_questions(qs, random.Random("42:case"))
    assert a == b
    draws = {json.dumps(sample_questions(qs, random.Random(s)), sort_keys=True) for s in range(30)}
    assert len(draws) > 5


def test_minus_one_and_nil_shares() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5]")
    minus, nil, asked_nl, asked_st = [], [], 0, 0
    for seed in range(200):
        nl, st = sample_questions(qs, random.Random(seed))
        minus.append(sum(q["answer"] == -1 for q in nl))
        nil.append(sum(q["answer"] == "Nil" for q in st))
        asked_nl, asked_st = asked_nl + len(nl), asked_st + len(st)
        nl, st = sample_questions(qs, random.Random(seed), next_line=10, state=10, nil_share=0.0)
        assert not any(q["answer"] == "Nil" for q in st)
    # The count varies between items (binomial), so "exactly one -1 per item" is no prior to learn;
    # the share stays near the param.
    assert len(set(minus)) > 1 and len(set(nil)) > 1
    assert max(minus) <= 1 and max(nil) <= 1  # the cap: floor(0.2 * 5)
    assert 0.05 < sum(minus) / asked_nl < 0.3
    assert 0.05 < sum(nil) / asked_st < 0.3


def test_special_quota() -> None:
    draws = [special_quota(0.2, 10, 10, random.Random(seed)) for seed in range(500)]
    assert set(draws) == {0, 1, 2}  # binomial(10, 0.2) under the cap floor(0.2 * 10)
    assert all(special_quota(0.9, 10, 2, random.Random(seed)) <= 2 for seed in range(50))
    assert special_quota(0.2, 5, 10) == 1
    assert special_quota(0.2, 10, 10) == 2
    assert special_quota(0.2, 10, 1) == 1
    assert special_quota(0.0, 10, 10) == 0
    assert special_quota(0.2, 0, 10) == 0
    assert special_quota(0.2, 5, 0) == 0


def test_the_cap_holds_when_few_other_questions_exist() -> None:
    # One loop of one iteration: few questions besides -1; the item asks fewer rather than more -1.
    qs = all_questions("def f(xs):\n    for x in xs:\n        xs = x\n    return xs\n", "[1]")
    for seed in range(20):
        nl, _ = sample_questions(qs, random.Random(seed))
        assert [q["answer"] for q in nl].count(-1) <= 1
        assert 1 <= len(nl) <= 4


def test_informative_questions_are_preferred() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5, 7, 1, 2]")
    pool = [q for q in qs if q["family"] == "next_line" and not is_trivial(q) and q["answer"] != -1]
    pool_mean = sum(weight(q) for q in pool) / len(pool)
    picked = []
    for seed in range(100):
        nl, _ = sample_questions(qs, random.Random(seed))
        picked += [q for q in nl if q["answer"] != -1]
    picked_mean = sum(weight(q) for q in picked) / len(picked)
    assert picked_mean > pool_mean
    assert any("call" in q["informative"] for q in picked)
    assert any("branch" in q["informative"] for q in picked)
    assert any("second_iteration" in q["informative"] for q in picked)


def test_distinct_lines_first() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5, 7, 1, 2]")
    for seed in range(20):
        nl, st = sample_questions(qs, random.Random(seed))
        assert len({q["line"] for q in nl}) == len(nl)  # more than 5 lines to choose from


def test_a_looping_program_gets_no_trivial_question() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5]")
    assert not is_straight_line(qs)
    for seed in range(50):
        nl, st = sample_questions(qs, random.Random(seed), next_line=10, state=10)
        assert not any(is_trivial(q) for q in nl + st)
    # Branch points and loop headers that fall through still count as informative.
    header = next(q for q in qs if q["family"] == "next_line" and q["line"] == 7 and q["occurrence"] == 1)
    assert header["trivial"] and not is_trivial(header)


def test_a_straight_line_program_gets_one_next_physical_line() -> None:
    qs = all_questions(STRAIGHT, "1, 2")
    assert is_straight_line(qs)
    for seed in range(20):
        nl, st = sample_questions(qs, random.Random(seed))
        assert len(nl) == STRAIGHT_LINE_TRIVIAL == 1
        assert nl[0]["trivial"] and nl[0]["answer"] == nl[0]["line"] + 1
        # The state questions: the three computed values, each read later (no constant, no Nil).
        assert [(q["line"], q["var"]) for q in st] == [(2, "c"), (3, "d"), (4, "e")]


def test_no_obvious_minus_one_nil_or_dead_variable_is_asked() -> None:
    source = """def f(xs):
    total = 0
    unused = len(xs)
    for x in xs:
        if x > 1:
            total += x
        else:
            total -= 1
    return total
"""
    qs = all_questions(source, "[1, 2, 3]")
    assert not is_straight_line(qs)
    asked = []
    for seed in range(100):
        nl, st = sample_questions(qs, random.Random(seed), next_line=10, state=10, nil_share=0.5)
        asked += nl + st
    assert not any(q["trivial"] and q["answer"] in (-1, "Nil") for q in asked)
    assert not any(q["family"] == "state" and q["var"] == "unused" for q in asked)
    # -1 and Nil remain where they need reasoning: the loop's next runs, its exit.
    specials = {(q["family"], q["line"]) for q in asked if q["answer"] in (-1, "Nil")}
    assert {("next_line", 4), ("next_line", 5), ("state", 4), ("state", 6)} <= specials
    assert ("next_line", 9) not in specials and ("next_line", 2) not in specials


def test_both_outcomes_of_a_branch_point_weigh_the_same() -> None:
    """A loop header falls through into its body at every iteration but the last: without the
    balance, four in five of its questions would answer "the next physical line"."""
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5, 7]")
    header = [q for q in qs if q["family"] == "next_line" and q["line"] == 7 and q["answer"] != -1]
    assert len(header) > 3 and sum(q["trivial"] for q in header) == len(header) - 1
    through = total = 0
    for seed in range(400):
        nl, _ = sample_questions(qs, random.Random(seed), next_line=3, state=0)
        for q in nl:
            if q["line"] == 7 and q["answer"] != -1:
                through += q["trivial"]
                total += 1
    assert total > 100 and 0.4 < through / total < 0.6


def test_non_literal_golds_are_never_asked() -> None:
    qs = [
        {"family": "state", "line": 2, "occurrence": 1, "var": "s", "answer": "frozenset({1}); frozenset"},
        {"family": "state", "line": 3, "occurrence": 1, "var": "t", "answer": "[1, 2]; list"},
        {"family": "next_line", "line": 2, "occurrence": 1, "answer": 3, "informative": ["branch"]},
    ]
    for seed in range(10):
        _, st = sample_questions(qs, random.Random(seed))
        assert [q["var"] for q in st] == ["t"]


def test_accept_filters() -> None:
    qs = all_questions(LOOPS, "[1, 2, 3, 0, 5]")
    nl, st = sample_questions(qs, random.Random(0), accept=lambda q: q.get("line") != 9)
    assert all(q["line"] != 9 for q in nl + st)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="next_line"):
        sample_questions([], random.Random(0), next_line=-1)
    with pytest.raises(ValueError, match="nil_share"):
        sample_questions([], random.Random(0), nil_share=1.5)
    with pytest.raises(ValueError):
        sample_coverage([], random.Random(0), -1)


def test_coverage_mixes_yes_and_no() -> None:
    qs = all_questions(LOOPS, "[0, 1]")  # helper never called: its line and line 9 never run
    for seed in range(20):
        picked = sample_coverage(qs, random.Random(seed), 3)
        answers = [q["answer"] for q in picked]
        assert len(picked) == 3 and "YES" in answers and "NO" in answers
        assert not any(q["trivial"] for q in picked)
        assert [q["line"] for q in picked] == sorted(q["line"] for q in picked)
    assert sample_coverage(all_questions(STRAIGHT, "1, 2"), random.Random(0), 3) == []


def test_cruxeval_programs(cruxeval_traced: list) -> None:
    """Over many real programs: counts, caps, no trivial question unless straight-line."""
    n_minus, n_nl, n_nil, n_st = 0, 0, 0, 0
    for _, row, trace in (t for t in cruxeval_traced if t[0] < 300):
        qs = questions_from_trace(row["code"], trace)
        nl, st = sample_questions(qs, random.Random(f"0:{row['id']}"))
        assert len(nl) <= 5 and len(st) <= 5
        if not is_straight_line(qs):
            assert not any(is_trivial(q) for q in nl + st)
        n_minus += sum(q["answer"] == -1 for q in nl)
        n_nil += sum(q["answer"] == "Nil" for q in st)
        n_nl += len(nl)
        n_st += len(st)
    assert 0.05 < n_minus / n_nl < 0.5
    assert 0.05 < n_nil / n_st < 0.5
