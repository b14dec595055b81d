"""Questions derived from a trace: every family, gold answers written out by hand (docs/design.md §4-§5)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from factory.tasks.analysis import statement_lines
from factory.tasks.questions import line_text, questions_from_trace
from factory.trace.tracer import trace_call

SOURCE = textwrap.dedent(
    """\
    def f(xs):
        n = 0
        for x in xs:
            if x > 0:
                n += g(x)
            else:
                n -= 1
        return n
    def g(v):
        return v * 2
    def unused(a):
        b = a + 1
        return b
    """
)


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    trace = trace_call(SOURCE, "f", "[2]")
    assert trace["status"] == "ok"
    # Steps: 2, 3, 4, 5, 10 (in g), 3, 8.
    assert [s["line"] for s in trace["steps"]] == [2, 3, 4, 5, 10, 3, 8]
    return questions_from_trace(SOURCE, trace)


def family(questions: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [q for q in questions if q["family"] == name]


def test_output_question_once(questions: list[dict[str, Any]]) -> None:
    outputs = family(questions, "output")
    assert len(outputs) == 1
    assert outputs[0]["answer"] == "4" and outputs[0]["answer_type"] == "int"


def test_next_line_answers(questions: list[dict[str, Any]]) -> None:
    got = [(q["line"], q["occurrence"], q["answer"]) for q in family(questions, "next_line")]
    occurring = [(2, 1, 3), (3, 1, 4), (4, 1, 5), (5, 1, 10), (10, 1, 3), (3, 2, 8), (8, 1, -1)]
    # One past the last occurrence of every line that ran, and lines that never run: -1.
    past_last = [(2, 2, -1), (3, 3, -1), (4, 2, -1), (5, 2, -1), (8, 2, -1), (10, 2, -1)]
    never_run = [(7, 1, -1), (12, 1, -1), (13, 1, -1)]
    assert got == occurring + past_last + never_run


def test_next_line_tags(questions: list[dict[str, Any]]) -> None:
    by_key = {(q["line"], q["occurrence"]): q for q in family(questions, "next_line")}
    assert "call" in by_key[5, 1]["informative"]  # into the helper g
    assert "return" in by_key[10, 1]["informative"]  # back to f's loop header
    assert by_key[3, 2]["informative"] == ["loop_header", "second_iteration"]
    assert not by_key[3, 2]["trivial"]  # leaves the loop: not the next physical line
    assert by_key[4, 1]["informative"] == ["branch"] and by_key[4, 1]["trivial"]
    assert by_key[2, 1]["trivial"] and by_key[2, 1]["informative"] == []
    assert "never_runs" in by_key[7, 1]["informative"]
    assert "last_step" in by_key[8, 1]["informative"] and by_key[8, 1]["trivial"]  # the final return


def test_state_answers_and_nil(questions: list[dict[str, Any]]) -> None:
    got = [(q["line"], q["occurrence"], q["var"], q["answer"]) for q in family(questions, "state")]
    changed = [(2, 1, "n", "0; int"), (3, 1, "x", "2; int"), (5, 1, "n", "4; int")]
    nil = [
        (2, 2, "n", "Nil"),
        (3, 3, "x", "Nil"),
        (4, 2, "x", "Nil"),
        (5, 2, "n", "Nil"),
        (8, 2, "n", "Nil"),
        (10, 2, "v", "Nil"),
        (7, 1, "n", "Nil"),
        (12, 1, "b", "Nil"),
        (12, 1, "a", "Nil"),
        (13, 1, "b", "Nil"),
    ]
    assert got == changed + nil
    first = family(questions, "state")[0]
    assert list(first) == ["family", "line", "occurrence", "var", "answer", "informative", "trivial", "live"]
    assert first["trivial"]  # n = 0: a constant assignment


def test_obvious_minus_one_and_nil_are_trivial(questions: list[dict[str, Any]]) -> None:
    """-1 / Nil need reasoning only where the line could run again (a loop, a helper called from
    one) or never ran (a branch not taken); after the entry's final return, -1 is obvious."""
    trivial = {
        (q["family"], q["line"], q["occurrence"])
        for q in questions
        if q["family"] in ("next_line", "state") and q["answer"] in (-1, "Nil") and q["trivial"]
    }
    # 2: `n = 0` before the loop, 8: the return (its 1st execution is the last step).
    assert trivial == {
        ("next_line", 2, 2),
        ("next_line", 8, 1),
        ("next_line", 8, 2),
        ("state", 2, 2),
        ("state", 8, 2),
    }


def test_state_questions_say_whether_the_variable_is_read_later(questions: list[dict[str, Any]]) -> None:
    live = {(q["line"], q["occurrence"], q["var"]): q["live"] for q in family(questions, "state")}
    # n is read by `n += g(x)` (an augmented assignment reads its target) and by the return.
    assert live[2, 1, "n"] and live[3, 1, "x"] and live[5, 1, "n"]
    # Nil: read by another statement of the function; g's v and unused's a only by their own line.
    assert live[7, 1, "n"] and live[12, 1, "b"] and live[3, 3, "x"]
    assert not live[10, 2, "v"] and not live[12, 1, "a"]


def test_dead_stores_are_not_live() -> None:
    source = textwrap.dedent(
        """\
        def f(a):
            b = a + 1
            c = a * 2
            c = c + 1
            return c
        """
    )
    trace = trace_call(source, "f", "3")
    live = {
        (q["line"], q["var"]): q["live"]
        for q in questions_from_trace(source, trace)
        if q["family"] == "state" and q["answer"] != "Nil"
    }
    assert live == {(2, "b"): False, (3, "c"): True, (4, "c"): True}


def test_lines_that_can_run_again() -> None:
    """Loop bodies (as the trace shows them), loop headers, and helpers entered several times or
    from a loop: their next execution is a real question; other lines run at most once."""
    source = textwrap.dedent(
        """\
        def g(v):
            return v + 1
        def h(v):
            return v - 1
        def f(xs):
            t = h(0)
            for x in xs:
                t = g(t)
            for y in []:
                t = 0
            return t
        """
    )
    trace = trace_call(source, "f", "[5]")
    past = {
        q["line"]: q["trivial"]
        for q in questions_from_trace(source, trace)
        if q["family"] == "next_line" and q["answer"] == -1 and q["occurrence"] >= 2
    }
    # h runs once from line 6; g from line 8, inside a loop that ran once; line 9 never iterates.
    assert past == {2: False, 4: True, 6: True, 7: False, 8: False, 9: False, 11: True}


def test_the_last_return_of_a_recursive_call_is_not_obvious() -> None:
    source = "def f(n):\n    if n <= 1:\n        return 1\n    return n * f(n - 1)\n"
    last = [
        q
        for q in questions_from_trace(source, trace_call(source, "f", "3"))
        if "last_step" in q["informative"]
    ]
    assert [(q["line"], q["answer"], q["trivial"]) for q in last] == [(3, -1, False)]
    plain = "def f(n):\n    m = n + 1\n    return m\n"
    last = [
        q for q in questions_from_trace(plain, trace_call(plain, "f", "3")) if "last_step" in q["informative"]
    ]
    assert [(q["line"], q["answer"], q["trivial"]) for q in last] == [(3, -1, True)]


def test_coverage(questions: list[dict[str, Any]]) -> None:
    got = {q["line"]: q["answer"] for q in family(questions, "coverage")}
    assert got == {
        2: "YES",
        3: "YES",
        4: "YES",
        5: "YES",
        7: "NO",
        8: "YES",
        10: "YES",
        12: "NO",
        13: "NO",
    }
    by_line = {q["line"]: q for q in family(questions, "coverage")}
    assert by_line[2]["trivial"] and not by_line[5]["trivial"] and not by_line[10]["trivial"]
    assert by_line[7]["informative"] == ["conditional", "never_runs"]


def test_non_literal_states_are_not_asked() -> None:
    source = textwrap.dedent(
        """\
        def f(n):
            it = iter(range(n))
            s = {1: object()}
            k = next(it)
            return k
        """
    )
    trace = trace_call(source, "f", "3")
    asked = {
        q["var"]
        for q in questions_from_trace(source, trace)
        if q["family"] == "state" and q["answer"] != "Nil"
    }
    assert asked == {"k"}


def test_loop_questions_count_occurrences_across_frames() -> None:
    source = textwrap.dedent(
        """\
        def f(n):
            if n <= 1:
                return 1
            return n * f(n - 1)
        """
    )
    trace = trace_call(source, "f", "3")
    next_line = {
        (q["line"], q["occurrence"]): q["answer"]
        for q in questions_from_trace(source, trace)
        if q["family"] == "next_line"
    }
    assert next_line[2, 1] == 4 and next_line[2, 3] == 3
    assert next_line[4, 1] == 2 and next_line[4, 2] == 2
    assert next_line[3, 1] == -1 and next_line[3, 2] == -1 and next_line[2, 4] == -1


def test_failed_trace_supports_no_question() -> None:
    trace = trace_call("def f(x):\n    return 1 // x\n", "f", "0")
    assert trace["status"] == "error:ZeroDivisionError"
    assert questions_from_trace("def f(x):\n    return 1 // x\n", trace) == []


def test_statement_lines_skip_module_level_docstrings_and_globals() -> None:
    source = textwrap.dedent(
        """\
        import math
        LIMIT = 3
        def f(x):
            \"\"\"Doc.\"\"\"
            global LIMIT
            y = (x +
                 1)
            return y
        class C:
            size = 1
            def m(self):
                return 2
        """
    )
    info = statement_lines(source)
    assert sorted(info) == [6, 8, 12]
    assert info[6].func == "f" and info[6].first_in_function and info[6].assigns == ("y",)
    assert info[12].func == "m" and info[12].kind == "return"


def test_an_augmented_assignment_reads_its_target() -> None:
    info = statement_lines("def f(xs):\n    n = 0\n    n += len(xs)\n    xs[0] += n\n    return n\n")
    assert set(info[3].names) == {"n", "len", "xs"} and info[3].assigns == ("n",)
    assert set(info[4].names) == {"xs", "n"}  # a subscript target's container is read anyway


def test_line_text() -> None:
    assert line_text(SOURCE, 5) == "n += g(x)"
    assert line_text(SOURCE, -1) == "-1"
    with pytest.raises(ValueError):
        line_text(SOURCE, 99)


JS_CATCH = """\
function f(s) {
  let n = 0;
  try {
    n = JSON.parse(s).length;
  } catch (e) {
    n = -1;
  }
  return n;
}
"""


def test_a_javascript_catch_line_is_a_branch_and_an_exception_landing() -> None:
    from factory.languages.javascript.trace_calls import trace_call_js

    trace = trace_call_js(JS_CATCH, "f", '"[1"')
    assert trace["status"] == "ok", trace
    assert [s["line"] for s in trace["steps"]] == [2, 3, 4, 5, 6, 8]  # 5: the catch clause
    questions = questions_from_trace(JS_CATCH, trace, language="javascript")
    landing = [q for q in family(questions, "next_line") if q["line"] == 4 and q["occurrence"] == 1]
    assert landing[0]["answer"] == 5 and "exception" in landing[0]["informative"]
    catch = [q for q in family(questions, "next_line") if q["line"] == 5 and q["occurrence"] == 1]
    assert "branch" in catch[0]["informative"]
