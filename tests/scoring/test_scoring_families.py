"""Property tests, one group per family: the gold answer written in the prompt's format scores
the maximum, a wrong value scores less, and each known exploit scores 0."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from factory.literals import is_literal, strict_equal
from factory.scoring import score_item

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SANDBOXED = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.binary(max_size=6),
)
_keys = st.one_of(st.booleans(), st.integers(-100, 100), st.text(max_size=4))
literals = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_keys, inner, max_size=3),
        st.sets(_keys, max_size=3),
    ),
    max_leaves=8,
).filter(is_literal)
arg_lists = st.lists(literals, min_size=1, max_size=3).map(tuple)
spaces = st.sampled_from(["", " ", "  ", "\t"])
wrappers = st.sampled_from(["{}", "\n{}\n", "\n```\n{}\n```\n", "\n```python\n{}\n```\n\n"])


def args_text(args: tuple[Any, ...]) -> str:
    return ", ".join(repr(a) for a in args)


def answer(lines: list[str], wrapper: str = "\n{}\n", prefix: str = "I think.") -> str:
    return f"{prefix}\n<answer>{wrapper.format(chr(10).join(lines))}</answer>"


def output_item(args: tuple[Any, ...], gold: Any) -> dict[str, Any]:
    return {
        "family": "output",
        "source": "def f(*args):\n    return args\n",
        "entry": "f",
        "args": args_text(args),
        "questions": [{"family": "output", "answer": repr(gold), "answer_type": type(gold).__name__}],
    }


# -- output -----------------------------------------------------------------------------------


@FAST
@given(args=arg_lists, gold=literals, pad=spaces, wrapper=wrappers)
def test_output_gold_scores_one(args, gold, pad, wrapper):
    line = f"{pad}assert f({args_text(args)}) == {gold!r}{pad}"
    assert score_item(output_item(args, gold), answer([line], wrapper)).reward == 1.0


@FAST
@given(args=arg_lists, gold=literals, other=literals)
def test_output_wrong_value_scores_zero(args, gold, other):
    assume(not strict_equal(gold, other))
    line = f"assert f({args_text(args)}) == {other!r}"
    assert score_item(output_item(args, gold), answer([line])).reward == 0.0


@FAST
@given(args=arg_lists, other_args=arg_lists, gold=literals)
def test_output_about_other_arguments_scores_zero(args, other_args, gold):
    assume(len(args) != len(other_args) or not all(map(strict_equal, args, other_args)))
    line = f"assert f({args_text(other_args)}) == {gold!r}"
    assert score_item(output_item(args, gold), answer([line])).reward == 0.0


@FAST
@given(args=arg_lists, gold=literals)
def test_output_exploits_score_zero(args, gold):
    a, g = args_text(args), repr(gold)
    item = output_item(args, gold)
    for line in (
        f"assert f({a}) == f({a})",
        f"assert f({a}) == {g} or True",
        f"assert {g} == f({a})",
        f"assert f({a}) == {g}, 'message'",
        f"assert (f({a}) == {g}, 'always true')",
        f"assert f({a}) == {g} == {g}",
        f"assert f({a}) == {g}; assert True",
        g,  # a bare literal: the assertion form is required
        f"assert g({a}) == {g}",
        f"assert f(*[{a}]) == {g}",
        "assert True",
    ):
        assert score_item(item, answer([line])).reward == 0.0, line
    # One line per question, no more, no less.
    right = f"assert f({a}) == {g}"
    assert score_item(item, answer([right, right])).reward == 0.0
    assert score_item(item, answer([])).reward == 0.0
    assert score_item(item, right).reward == 0.0  # no answer block


# -- input (runs the original program in the sandbox) -----------------------------------------

IDENTITY = "def f(x):\n    return x\n"


def input_item(gold_output: Any, own_args: str = "'never the answer'") -> dict[str, Any]:
    return {
        "family": "input",
        "source": IDENTITY,
        "entry": "f",
        "args": own_args,
        "questions": [{"family": "input", "answer": repr(gold_output)}],
    }


@SANDBOXED
@given(gold=literals)
def test_input_gold_scores_one(gold):
    line = f"assert f({gold!r}) == {gold!r}"
    result = score_item(input_item(gold), answer([line]))
    assert result.reward == 1.0
    assert result.status == "ok"  # it ran


@SANDBOXED
@given(gold=literals, other=literals)
def test_input_wrong_value_scores_zero(gold, other):
    assume(not strict_equal(gold, other))
    line = f"assert f({other!r}) == {gold!r}"
    assert score_item(input_item(gold), answer([line])).reward == 0.0


@FAST
@given(gold=literals)
def test_input_exploits_score_zero(gold):
    item = input_item(gold)
    g = repr(gold)
    for line in (
        "pass",
        f"assert f(type('X', (), {{'__eq__': lambda s, o: True}})()) == {g}",
        f"assert f(x) == {g}",
        f"assert f(eval({g!r})) == {g}",
        f"assert f(*[{g}]) == {g}",
        f"assert f(x={g}) == {g}",
        f"assert {g} == f({g})",
        f"assert f({g}) == {g} or True",
        f"assert f(lambda: {g}) == {g}",
    ):
        result = score_item(item, answer([line]))
        assert result.reward == 0.0, line
        assert result.status is None, line  # refused before anything ran


def test_input_own_arguments_are_right_without_running():
    result = score_item(input_item([1, 2], own_args="[1, 2]"), answer(["assert f([1, 2]) == ??"]))
    assert result.reward == 0.0  # `??` does not parse: the line must be a whole assertion
    result = score_item(input_item([1, 2], own_args="[1, 2]"), answer(["assert f([1,2]) == 0"]))
    assert (result.reward, result.status) == (1.0, None)


# -- next_line --------------------------------------------------------------------------------

source_lines = st.lists(
    st.text(alphabet="abcxyz =+()[]:0123456789", min_size=1, max_size=12).filter(str.strip),
    min_size=1,
    max_size=8,
)


def next_line_item(lines: list[str], gold: int) -> dict[str, Any]:
    return {
        "family": "next_line",
        "source": "\n".join(lines) + "\n",
        "entry": "f",
        "questions": [{"family": "next_line", "line": 1, "occurrence": 1, "answer": gold}],
    }


@FAST
@given(lines=source_lines, data=st.data(), pad=spaces, wrapper=wrappers)
def test_next_line_gold_scores_one(lines, data, pad, wrapper):
    gold = data.draw(st.integers(1, len(lines)))
    text = f"{pad}{lines[gold - 1].strip()}{pad}"
    assert score_item(next_line_item(lines, gold), answer([text], wrapper)).reward == 1.0
    assert score_item(next_line_item(lines, -1), answer(["-1"], wrapper)).reward == 1.0


@FAST
@given(lines=source_lines, data=st.data())
def test_next_line_wrong_line_scores_zero(lines, data):
    gold = data.draw(st.integers(1, len(lines)))
    other = data.draw(st.integers(1, len(lines)))
    assume(lines[other - 1].strip() != lines[gold - 1].strip())
    item = next_line_item(lines, gold)
    assert score_item(item, answer([lines[other - 1]])).reward == 0.0
    assert score_item(item, answer(["-1"])).reward == 0.0
    assert score_item(next_line_item(lines, -1), answer([lines[gold - 1]])).reward == 0.0


def test_next_line_identical_lines_are_all_accepted_and_numbers_are_not():
    lines = ["def f(x):", "    x += 1", "    x += 1", "    return x"]
    assert score_item(next_line_item(lines, 3), answer(["x += 1"])).reward == 1.0
    assert score_item(next_line_item(lines, 3), answer(["3"])).reward == 0.0
    assert score_item(next_line_item(lines, 4), answer(["return x."])).reward == 1.0


# -- state ------------------------------------------------------------------------------------


def state_item(gold: str) -> dict[str, Any]:
    return {
        "family": "state",
        "source": "def f(x):\n    return x\n",
        "entry": "f",
        "questions": [{"family": "state", "line": 1, "occurrence": 1, "var": "x", "answer": gold}],
    }


@FAST
@given(value=literals, pad=spaces, wrapper=wrappers)
def test_state_gold_scores_one(value, pad, wrapper):
    gold = f"{value!r}; {type(value).__name__}"
    line = f"{pad}{value!r}{pad};{pad}{type(value).__name__}{pad}"
    assert score_item(state_item(gold), answer([line], wrapper)).reward == 1.0


@FAST
@given(value=literals, other=literals)
def test_state_wrong_value_or_type_scores_zero(value, other):
    assume(not strict_equal(value, other))
    gold = f"{value!r}; {type(value).__name__}"
    assert score_item(state_item(gold), answer([f"{other!r}; {type(value).__name__}"])).reward == 0
    assert score_item(state_item(gold), answer([f"{value!r}; wrongtype"])).reward == 0
    assert score_item(state_item(gold), answer(["Nil"])).reward == 0


def test_state_nil_and_splitting_on_the_last_semicolon():
    assert score_item(state_item("Nil"), answer(["nil"])).reward == 1.0
    assert score_item(state_item("Nil"), answer(["None; NoneType"])).reward == 0.0
    assert score_item(state_item("'a;b'; str"), answer(["'a;b'; str"])).reward == 1.0
    assert score_item(state_item("'a;b'; str"), answer(['"a;b";str.'])).reward == 1.0
    assert score_item(state_item("1; int"), answer(["True; int"])).reward == 0.0
    assert score_item(state_item("1.0; float"), answer(["1; float"])).reward == 0.0
    result = score_item(state_item("1; int"), answer(["1 int"]))
    assert result.per_question[0]["verdict"] == "unparsed"


# -- coverage ---------------------------------------------------------------------------------


def coverage_item(gold: str) -> dict[str, Any]:
    return {
        "family": "coverage",
        "source": "def f(x):\n    return x\n",
        "entry": "f",
        "questions": [{"family": "coverage", "line": 2, "answer": gold}],
    }


@FAST
@given(gold=st.sampled_from(["YES", "NO"]), case=st.sampled_from([str.lower, str.upper, str.title]))
def test_coverage(gold, case):
    other = "NO" if gold == "YES" else "YES"
    assert score_item(coverage_item(gold), answer([case(gold)])).reward == 1.0
    assert score_item(coverage_item(gold), answer([case(gold) + "."])).reward == 1.0
    assert score_item(coverage_item(gold), answer([other])).reward == 0.0
    assert score_item(coverage_item(gold), answer(["maybe"])).reward == 0.0
    assert score_item(coverage_item(gold), answer([gold, gold])).reward == 0.0


# -- white box --------------------------------------------------------------------------------


@FAST
@given(
    n_next=st.integers(0, 5),
    n_state=st.integers(0, 5),
    data=st.data(),
    alpha=st.floats(0, 1),
    gated=st.booleans(),
)
def test_white_box_reward_formula(n_next, n_state, data, alpha, gated):
    lines = ["def f(x):", "    y = x + 1", "    return y"]
    questions = [{"family": "output", "answer": "2", "answer_type": "int"}]
    right_answers = ["assert f(1) == 2"]
    wrong_answers = ["assert f(1) == 3"]
    for _ in range(n_next):
        questions.append({"family": "next_line", "line": 2, "occurrence": 1, "answer": 3})
        right_answers.append("return y")
        wrong_answers.append("y = x + 1")
    for _ in range(n_state):
        questions.append({"family": "state", "line": 2, "occurrence": 1, "var": "y", "answer": "2; int"})
        right_answers.append("2; int")
        wrong_answers.append("2.0; float")
    item = {
        "family": "white_box",
        "source": "\n".join(lines) + "\n",
        "entry": "f",
        "args": "1",
        "questions": questions,
    }
    correct = data.draw(st.lists(st.booleans(), min_size=len(questions), max_size=len(questions)))
    chosen = [r if ok else w for ok, r, w in zip(correct, right_answers, wrong_answers, strict=True)]
    result = score_item(item, answer(chosen), alpha=alpha, gated=gated)
    r_io = 1.0 if correct[0] else 0.0
    r_wb = sum(correct[1:]) / (len(correct) - 1) if len(correct) > 1 else r_io
    expected = 2 * ((1 - alpha) * r_io + alpha * r_wb)
    if gated and not correct[0]:
        expected = 0.0
    assert abs(result.reward - expected) < 1e-12
    assert (result.r_io, result.r_wb) == (r_io, r_wb)
    assert result.n_right == sum(correct)
    all_right = score_item(item, answer(right_answers), alpha=alpha, gated=gated)
    assert all_right.reward == 2.0


# -- codegen (runs the unit tests in the sandbox) ---------------------------------------------


@SANDBOXED
@given(k=st.integers(-50, 50), wrong=st.integers(-50, 50))
def test_codegen_fraction_of_tests(k, wrong):
    assume(wrong != k)
    item = {
        "family": "codegen",
        "entry": "f",
        "tests": [f"assert f({i}) == {i + k}" for i in range(4)],
    }
    good = f"<answer>\n```python\ndef f(x):\n    return x + {k}\n```\n</answer>"
    assert score_item(item, good).reward == 1.0
    half = f"```python\ndef f(x):\n    return x + ({k} if x < 2 else {wrong})\n```"
    assert score_item(item, half).reward == 0.5
    assert score_item(item, f"def f(x):\n    return x + {wrong}\n").reward == 0.0
