"""The tracer against hand-written traces: every rule of docs/design.md §4 and factory/trace/semantics.md.

Expected steps and states are written out by hand from the source (not copied from a run).
Line numbers count from the first line after the opening triple quote of each program.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory.errors import UserError
from factory.literals import is_literal
from factory.params import TraceParams
from factory.trace.jobs import payload_limits, trace_job
from factory.trace.statements import statement_starts
from factory.trace.tracer import trace_call
from factory.trace.values import literal_value

REPO = Path(__file__).resolve().parents[2]
LIMITS = payload_limits(TraceParams())


def program(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(source: str, args: str, **kwargs: Any) -> dict[str, Any]:
    result = trace_call(source, "f", args, **kwargs)
    assert result["status"] != "tracer_error", result["error"]
    return result


def steps(trace: dict[str, Any]) -> list[tuple[int, str]]:
    """``[(line, func), ...]`` in step order."""
    assert [s["step"] for s in trace["steps"]] == list(range(1, len(trace["steps"]) + 1))
    return [(s["line"], s["func"]) for s in trace["steps"]]


def lines(trace: dict[str, Any]) -> list[int]:
    return [s["line"] for s in trace["steps"]]


def states(trace: dict[str, Any]) -> dict[int, dict[str, str]]:
    """``{step: {var: "repr; type"}}`` for the steps that changed something."""
    out: dict[int, dict[str, str]] = {}
    for s in trace["states"]:
        out.setdefault(s["step"], {})[s["var"]] = f"{s['repr']}; {s['type']}"
    return out


# --- helpers, recursion, control flow -----------------------------------------------------------

HELPER = program(
    """
    def f(x):
        y = g(x)
        z = y + 1
        return z
    def g(a):
        b = a * 2
        return b
    """
)


def test_helper_call_goes_to_the_helper_and_returns_to_the_callers_next_step() -> None:
    trace = run(HELPER, "3")
    assert trace["status"] == "ok"
    assert trace["output_repr"] == "7" and trace["output_type"] == "int"
    assert steps(trace) == [(2, "f"), (6, "g"), (7, "g"), (3, "f"), (4, "f")]
    # y is seen in f's frame at f's next event (line 3), after g's steps; b at g's next event.
    assert states(trace) == {1: {"y": "6; int"}, 2: {"b": "6; int"}, 4: {"z": "7; int"}}


def test_recursion_factorial() -> None:
    source = program(
        """
        def f(n):
            if n <= 1:
                return 1
            return n * f(n - 1)
        """
    )
    trace = run(source, "3")
    assert trace["output_repr"] == "6"
    assert steps(trace) == [(2, "f"), (4, "f"), (2, "f"), (4, "f"), (2, "f"), (3, "f")]
    assert trace["states"] == []  # n is an argument of every frame and never changes


def test_early_return_inside_a_loop() -> None:
    source = program(
        """
        def f(xs):
            for x in xs:
                if x > 2:
                    return x
            return -1
        """
    )
    trace = run(source, "[1, 3, 5]")
    assert trace["output_repr"] == "3"
    assert lines(trace) == [2, 3, 2, 3, 4]
    assert states(trace) == {1: {"x": "1; int"}, 3: {"x": "3; int"}}


def test_break_and_continue() -> None:
    source = program(
        """
        def f(xs):
            out = []
            for x in xs:
                if x == 0:
                    continue
                if x < 0:
                    break
                out.append(x)
            return out
        """
    )
    trace = run(source, "[1, 0, -1, 2]")
    assert trace["output_repr"] == "[1]"
    assert lines(trace) == [2, 3, 4, 6, 8, 3, 4, 5, 3, 4, 6, 7, 9]
    assert states(trace) == {
        1: {"out": "[]; list"},
        2: {"x": "1; int"},
        5: {"out": "[1]; list"},
        6: {"x": "0; int"},
        9: {"x": "-1; int"},
    }


def test_while_loop_exit() -> None:
    source = program(
        """
        def f(n):
            i = 0
            while i < n:
                i += 1
            return i
        """
    )
    trace = run(source, "2")
    assert lines(trace) == [2, 3, 4, 3, 4, 3, 5]
    assert states(trace) == {1: {"i": "0; int"}, 3: {"i": "1; int"}, 5: {"i": "2; int"}}


def test_exception_caught_inside_the_program() -> None:
    source = program(
        """
        def f(x):
            try:
                y = 10 // x
            except ZeroDivisionError:
                y = -1
            return y
        """
    )
    caught = run(source, "0")
    assert caught["status"] == "ok" and caught["output_repr"] == "-1"
    assert lines(caught) == [2, 3, 4, 5, 6]
    assert states(caught) == {4: {"y": "-1; int"}}  # the failed division bound nothing
    clean = run(source, "5")
    assert lines(clean) == [2, 3, 6]
    assert states(clean) == {2: {"y": "2; int"}}


def test_exception_raised_in_a_helper_and_caught_by_the_caller() -> None:
    source = program(
        """
        def f(x):
            try:
                v = g(x)
            except ValueError:
                v = 0
            return v
        def g(x):
            if x < 0:
                raise ValueError(x)
            return x
        """
    )
    trace = run(source, "-1")
    assert steps(trace) == [(2, "f"), (3, "f"), (8, "g"), (9, "g"), (4, "f"), (5, "f"), (6, "f")]
    assert states(trace) == {6: {"v": "0; int"}}


def test_uncaught_exception_keeps_the_steps_so_far() -> None:
    source = program(
        """
        def f(x):
            y = x + 1
            return y // 0
        """
    )
    trace = run(source, "1")
    assert trace["status"] == "error:ZeroDivisionError"
    assert trace["output_repr"] is None and "division" in trace["error"]
    assert lines(trace) == [2, 3]
    assert states(trace) == {1: {"y": "2; int"}}


# --- comprehensions, generator expressions, lambdas, nested functions ---------------------------


def test_comprehension_and_generator_expression_are_part_of_their_statement() -> None:
    source = program(
        """
        def f(xs):
            ys = [x * 2 for x in xs]
            total = sum(y for y in ys)
            return total
        """
    )
    trace = run(source, "[1, 2]")
    assert trace["output_repr"] == "6"
    # One step per statement: the comprehension's own line events are not steps, and its
    # variables (x, y) are not states.
    assert steps(trace) == [(2, "f"), (3, "f"), (4, "f")]
    assert states(trace) == {1: {"ys": "[2, 4]; list"}, 2: {"total": "6; int"}}


def test_helper_called_from_a_comprehension_is_traced() -> None:
    source = program(
        """
        def f(xs):
            ys = [g(x) for x in xs]
            return ys
        def g(v):
            return v + 1
        """
    )
    trace = run(source, "[1, 2]")
    assert steps(trace) == [(2, "f"), (5, "g"), (5, "g"), (3, "f")]
    assert states(trace) == {1: {"ys": "[2, 3]; list"}}


def test_lazy_generator_expression_does_not_jump_back() -> None:
    source = program(
        """
        def f(xs):
            gen = (x + 1 for x in xs)
            out = []
            for v in gen:
                out.append(v)
            return out
        """
    )
    trace = run(source, "[1, 2]")
    assert lines(trace) == [2, 3, 4, 5, 4, 5, 4, 6]
    gen_state = trace["states"][0]
    assert gen_state["var"] == "gen" and gen_state["type"] == "generator"
    assert not gen_state["literal"]
    assert "0x…" in gen_state["repr"]  # the address is masked: runs compare equal


def test_lambda_body_is_not_a_step() -> None:
    source = program(
        """
        def f(xs):
            key = lambda v: -v
            ys = sorted(xs, key=key)
            return ys
        """
    )
    trace = run(source, "[1, 3, 2]")
    assert trace["output_repr"] == "[3, 2, 1]"
    assert steps(trace) == [(2, "f"), (3, "f"), (4, "f")]
    got = states(trace)
    assert got[1]["key"].endswith("; function")
    assert got[2] == {"ys": "[3, 2, 1]; list"}


def test_nested_function_and_closure() -> None:
    source = program(
        """
        def f(n):
            acc = []
            def add(v):
                acc.append(v)
                return len(acc)
            k = add(n)
            k = add(n + 1)
            return acc
        """
    )
    trace = run(source, "5")
    assert trace["output_repr"] == "[5, 6]"
    assert steps(trace) == [
        (2, "f"),
        (3, "f"),
        (6, "f"),
        (4, "add"),
        (5, "add"),
        (7, "f"),
        (4, "add"),
        (5, "add"),
        (8, "f"),
    ]
    got = states(trace)
    assert got[1] == {"acc": "[]; list"}
    assert set(got[2]) == {"add"}
    assert got[3] == {"k": "1; int", "acc": "[5]; list"}
    # The free variable acc is a variable of add's frame too: mutated there, seen there.
    assert got[4] == {"acc": "[5]; list"}
    assert got[6] == {"k": "2; int", "acc": "[5, 6]; list"}
    assert got[7] == {"acc": "[5, 6]; list"}


def test_generator_function_steps_appear_when_it_is_resumed() -> None:
    source = program(
        """
        def f(n):
            out = []
            for v in gen(n):
                out.append(v)
            return out
        def gen(n):
            i = 0
            while i < n:
                yield i
                i += 1
        """
    )
    trace = run(source, "2")
    assert trace["output_repr"] == "[0, 1]"
    assert steps(trace) == [
        (2, "f"),
        (3, "f"),
        (7, "gen"),
        (8, "gen"),
        (9, "gen"),
        (4, "f"),
        (3, "f"),
        (10, "gen"),
        (8, "gen"),
        (9, "gen"),
        (4, "f"),
        (3, "f"),
        (10, "gen"),
        (8, "gen"),
        (5, "f"),
    ]
    got = states(trace)
    assert got[3] == {"i": "0; int"}
    assert got[8] == {"i": "1; int"}  # i persists across the suspension
    assert got[13] == {"i": "2; int"}
    assert got[2] == {"v": "0; int"} and got[6] == {"out": "[0]; list"}


def test_with_exit_and_match_cases() -> None:
    source = program(
        """
        class Ctx:
            def __enter__(self):
                return 5
            def __exit__(self, *exc):
                return False
        def f(xs):
            with Ctx() as c:
                y = c + 1
            match xs:
                case [a, *rest]:
                    m = a
                case _:
                    m = 0
            return y + m
        """
    )
    trace = run(source, "[2, 3]")
    assert trace["output_repr"] == "8"
    # Leaving the with block reports its line again (__exit__ runs there); case patterns are steps.
    assert steps(trace) == [
        (7, "f"),
        (3, "__enter__"),
        (8, "f"),
        (7, "f"),
        (5, "__exit__"),
        (9, "f"),
        (10, "f"),
        (11, "f"),
        (14, "f"),
    ]
    assert states(trace) == {
        1: {"c": "5; int"},
        3: {"y": "6; int"},
        7: {"a": "2; int", "rest": "[3]; list"},
        8: {"m": "2; int"},
    }
    assert lines(run(source, "[]"))[5:] == [9, 10, 12, 13, 14]


def test_class_body_inside_a_function() -> None:
    source = program(
        """
        def f():
            class P:
                k = 2
            return P.k
        """
    )
    trace = run(source, "")
    assert steps(trace) == [(2, "f"), (2, "P"), (3, "P"), (4, "f")]
    assert states(trace)[3] == {"k": "2; int"}  # no __module__ / __qualname__


# --- multi-line statements ----------------------------------------------------------------------

MULTILINE = program(
    """
    def f(a, b):
        total = add(a,
                    b,
                    1)
        d = {
            "a": a,
            "t": total,
        }
        s = a + \\
            b
        return d, s
    def add(x, y, z):
        return x + y + z
    """
)


def test_statements_spanning_lines_report_their_first_line_once() -> None:
    trace = run(MULTILINE, "1, 2")
    assert trace["output_repr"] == "({'a': 1, 't': 4}, 3)"
    assert steps(trace) == [(2, "f"), (13, "add"), (5, "f"), (9, "f"), (11, "f")]
    assert states(trace) == {
        1: {"total": "4; int"},
        3: {"d": "{'a': 1, 't': 4}; dict"},
        4: {"s": "3; int"},
    }


def test_multiline_loop_body_gives_one_step_per_iteration_and_line() -> None:
    source = program(
        """
        def f(xs):
            total = 0
            for x in (
                xs
            ):
                total = total + max(x,
                                    0)
            return total
        """
    )
    trace = run(source, "[1, -1, 2]")
    assert trace["output_repr"] == "3"
    assert lines(trace) == [2, 3, 6, 3, 6, 3, 6, 3, 8]


def test_one_line_loop_is_one_step_per_iteration() -> None:
    source = program(
        """
        def f(xs):
            total = 0
            for x in xs: total += x
            return total
        """
    )
    trace = run(source, "[1, 2]")
    # Python reports the header line once per test (3 tests for 2 items); the body on the same
    # line is no separate event.
    assert lines(trace) == [2, 3, 3, 3, 4]


def test_statement_starts_map() -> None:
    source = program(
        """
        def f(a,
              b):
            if (a and
                    b):
                x = g(1,
                      2)
            elif b: y = 1
            else:
                pass
            try:
                z = 0
            except (ValueError,
                    KeyError):
                z = 1
            finally:
                z = 2
            return [x
                    for x in a]
        """
    )
    starts = statement_starts(source)
    assert starts[1] == starts[2] == 1
    assert starts[3] == starts[4] == 3
    assert starts[5] == starts[6] == 5
    assert starts[7] == 7
    assert 8 not in starts  # `else:` is no statement
    assert starts[9] == 9
    assert starts[10] == 10 and starts[11] == 11
    assert starts[12] == starts[13] == 12  # an except header is a statement of its own
    assert starts[14] == 14
    assert 15 not in starts
    assert starts[16] == 16
    assert starts[17] == starts[18] == 17


# --- values and states ---------------------------------------------------------------------------


def test_in_place_mutation_is_a_change() -> None:
    source = program(
        """
        def f(xs):
            xs.append(4)
            xs[0] = 9
            n = len(xs)
            return xs
        """
    )
    trace = run(source, "[1, 2]")
    assert states(trace) == {
        1: {"xs": "[1, 2, 4]; list"},
        2: {"xs": "[9, 2, 4]; list"},
        3: {"n": "3; int"},
    }


def test_unchanged_variables_are_not_states() -> None:
    source = program(
        """
        def f(a):
            b = [1, 2]
            b = b[:]
            c = a + 0
            a = a * 1
            d = {"k": [1]}
            d = {"k": [1]}
            return b, c
        """
    )
    trace = run(source, "1000")
    assert lines(trace) == [2, 3, 4, 5, 6, 7, 8]
    # Rebinding a name to an equal value (new object, same type and repr) is no change.
    assert states(trace) == {1: {"b": "[1, 2]; list"}, 3: {"c": "1000; int"}, 5: {"d": "{'k': [1]}; dict"}}


def test_equal_values_of_another_type_are_changes() -> None:
    source = program(
        """
        def f():
            x = 1
            x = True
            x = 1.0
            ys = [1, 0.0]
            ys[0] = True
            ys[1] = -0.0
            ys[1] = -0.0
            return x
        """
    )
    trace = run(source, "")
    assert states(trace) == {
        1: {"x": "1; int"},
        2: {"x": "True; bool"},
        3: {"x": "1.0; float"},
        4: {"ys": "[1, 0.0]; list"},
        5: {"ys": "[True, 0.0]; list"},
        6: {"ys": "[True, -0.0]; list"},
    }


def test_nested_mutation_and_aliases() -> None:
    source = program(
        """
        def f():
            grid = [[0, 0], [0, 0]]
            row = grid[1]
            row[0] = 5
            return grid
        """
    )
    trace = run(source, "")
    assert states(trace) == {
        1: {"grid": "[[0, 0], [0, 0]]; list"},
        2: {"row": "[0, 0]; list"},
        3: {"grid": "[[0, 0], [5, 0]]; list", "row": "[5, 0]; list"},
    }


def test_deleted_variable_is_new_again_when_rebound() -> None:
    source = program(
        """
        def f():
            x = 1
            del x
            x = 1
            return x
        """
    )
    assert states(run(source, "")) == {1: {"x": "1; int"}, 3: {"x": "1; int"}}


def test_literal_flag_and_truncation() -> None:
    source = program(
        """
        def f():
            a = list(range(300))
            b = {1, 2}
            c = frozenset({1})
            d = float("inf")
            e = object()
            s = "x" * 600
            return 0
        """
    )
    trace = run(source, "", max_repr=100)
    by_var = {s["var"]: s for s in trace["states"]}
    assert by_var["a"]["truncated"] and not by_var["a"]["literal"]
    assert by_var["a"]["repr"] == repr(list(range(300)))[:100]
    assert by_var["b"]["literal"] and by_var["b"]["repr"] == "{1, 2}" and not by_var["b"]["truncated"]
    assert not by_var["c"]["literal"] and by_var["c"]["type"] == "frozenset"
    assert not by_var["d"]["literal"] and by_var["d"]["repr"] == "inf"
    assert not by_var["e"]["literal"] and by_var["e"]["repr"] == "<object object at 0x…>"
    assert by_var["s"]["truncated"] and by_var["s"]["repr"] == repr("x" * 600)[:100]


literal_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.complex_numbers()
    | st.text(max_size=5)
    | st.binary(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
        | st.sets(st.integers() | st.booleans() | st.floats(), max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers(), children, max_size=3)
    ),
    max_leaves=12,
)


@given(literal_like)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_fast_literal_check_agrees_with_is_literal(value: Any) -> None:
    assert literal_value(value) == is_literal(value)


# --- statuses and options ------------------------------------------------------------------------


def test_step_limit() -> None:
    source = program(
        """
        def f():
            while True:
                pass
        """
    )
    trace = run(source, "", max_steps=50)
    assert trace["status"] == "too_many_steps"
    assert len(trace["steps"]) == 50


def test_step_limit_survives_a_bare_except() -> None:
    # Raising from the trace function switches tracing off; a program that swallows the stop
    # and then returns is still reported as too_many_steps. (One that swallows it and loops
    # forever is stopped by the sandbox's timeout, not by the tracer.)
    source = program(
        """
        def f():
            n = 0
            try:
                while True:
                    n += 1
            except:
                pass
            return n
        """
    )
    trace = run(source, "", max_steps=30)
    assert trace["status"] == "too_many_steps"
    assert len(trace["steps"]) == 30


def test_a_value_outgrowing_max_state_bytes_ends_the_trace() -> None:
    # Watching a huge value for changes would cost a marshal of it at every step; the trace ends
    # at the step where it passes the limit, also when the program swallows the stop.
    grows = """
        def f(n):
            items = [1, 2]
            try:
                for i in range(n):
                    items *= 4
            except BaseException:
                pass
            return len(items)
        """
    trace = run(program(grows), "12", max_state_bytes=4096)
    assert trace["status"] == "state_too_large"
    # [1, 2] * 4**k is 5 * 2 * 4**k + 5 marshal bytes: it first passes 4096 at k = 5, the 5th
    # execution of line 6, so the trace stops there (after 2 + 2 * 5 steps).
    assert len(trace["steps"]) == 12
    small = run(program(grows), "3", max_state_bytes=4096)
    assert small["status"] == "ok" and small["output_repr"] == "128"


def test_runaway_recursion() -> None:
    source = program(
        """
        def f(n):
            return f(n + 1)
        """
    )
    assert run(source, "0")["status"] == "recursion"


def test_non_literal_output() -> None:
    source = program(
        """
        def f():
            return object()
        """
    )
    trace = run(source, "")
    assert trace["status"] == "non_literal"
    assert trace["output_type"] == "object" and "0x…" in trace["output_repr"]


def test_bad_programs_and_bad_args() -> None:
    assert run("def f(:\n    pass\n", "")["status"] == "bad_program"
    assert run("def g():\n    return 1\n", "")["status"] == "bad_program"
    assert run("raise ValueError('at load')\ndef f():\n    return 1\n", "")["status"] == "bad_program"
    with pytest.raises(UserError):
        trace_call("def f(x):\n    return x\n", "f", "foo()")
    with pytest.raises(UserError):
        trace_call("def f(x):\n    return x\n", "f", "1", max_steps=0)
    job = trace_job({"source": "def f(x):\n    return x\n", "entry": "f", "args": "foo()", **LIMITS})
    assert job["status"] == "bad_args" and job["steps"] == []


def test_eval_args_runs_expressions_in_the_programs_namespace_untraced() -> None:
    source = program(
        """
        data = [3, 1]
        def f(xs, key=None):
            return sorted(xs, key=key)
        """
    )
    trace = run(source, "data[:], key=lambda v: -v", eval_args=True)
    assert trace["status"] == "ok" and trace["output_repr"] == "[3, 1]"
    assert lines(trace) == [3]


def test_capture_false_records_the_same_steps_and_no_states() -> None:
    full = run(MULTILINE, "1, 2")
    cheap = run(MULTILINE, "1, 2", capture=False)
    assert cheap["steps"] == full["steps"]
    assert cheap["states"] == [] and cheap["output_repr"] == full["output_repr"]


def test_program_output_is_discarded(capsys: pytest.CaptureFixture[str]) -> None:
    source = program(
        """
        def f(x):
            print("noise", x)
            return x
        """
    )
    assert run(source, "1")["status"] == "ok"
    assert capsys.readouterr().out == ""


def test_trace_job_matches_trace_call() -> None:
    payload = {"source": HELPER, "entry": "f", "args": "3", **LIMITS}
    assert trace_job(payload) == trace_call(HELPER, "f", "3")
    assert trace_job({**payload, "capture": False})["states"] == []
    assert trace_job({**payload, "max_steps": 2})["status"] == "too_many_steps"


def test_program_is_not_compiled_with_the_tracers_future_imports() -> None:
    source = program(
        """
        def f() -> int:
            return len(f.__annotations__["return"].__name__)
        """
    )
    assert run(source, "")["output_repr"] == "3"  # an annotation object, not the string "int"


def test_tracer_restores_the_previous_trace_function() -> None:
    seen: list[str] = []

    def outer(frame: Any, event: str, arg: Any) -> None:
        seen.append(event)

    sys.settrace(outer)
    try:
        run(HELPER, "3")
        assert sys.gettrace() is outer
    finally:
        sys.settrace(None)


# --- determinism across hash seeds ---------------------------------------------------------------

_SUBPROCESS = """
import json, sys
from factory.trace.tracer import trace_call
source, args = json.loads(sys.stdin.read())
result = trace_call(source, "f", args)
print(json.dumps([result["steps"], result["states"]]))
"""


def _trace_with_seed(source: str, args: str, seed: int) -> Any:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS],
        input=json.dumps([source, args]),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def test_same_trace_under_two_hash_seeds_without_sets() -> None:
    source = program(
        """
        def f(words):
            counts = {}
            for w in words:
                counts[w] = counts.get(w, 0) + 1
            key = lambda w: (-counts[w], w)
            return sorted(counts, key=key)[:2]
        """
    )
    args = "['b', 'a', 'b', 'c', 'a', 'b']"
    one, two = _trace_with_seed(source, args, 1), _trace_with_seed(source, args, 2)
    assert one == two
    assert one[1]  # states were compared, not just empty lists


def test_iterating_a_set_of_strings_depends_on_the_hash_seed() -> None:
    source = program(
        """
        def f(words):
            seen = set(words)
            out = []
            for w in seen:
                out.append(w)
            return out
        """
    )
    args = repr([f"word{i}" for i in range(12)])
    one, two = _trace_with_seed(source, args, 1), _trace_with_seed(source, args, 2)
    assert one[0] == two[0]  # same lines ...
    assert one[1] != two[1]  # ... but the states differ: the caller drops such a case


# --- property test over generated programs -------------------------------------------------------


@st.composite
def small_programs(draw: st.DrawFn) -> str:
    """Straight-line code and loops over an int list ``xs``, returning a literal."""
    body = ["a = 0", "b = []", "c = 1"]

    def statement(depth: int) -> list[str]:
        kind = draw(
            st.sampled_from(["assign", "append", "if", "for", "while"] if depth < 2 else ["assign", "append"])
        )
        const = draw(st.integers(-3, 3))
        if kind == "assign":
            op = draw(st.sampled_from(["+", "-", "*"]))
            # A product of variables in nested loops squares itself past any repr limit: `*` takes
            # a constant only, so values grow at most geometrically (a few dozen digits).
            operands = [str(const)] if op == "*" else ["a", "c", str(const), "len(b)"]
            other = draw(st.sampled_from(operands))
            target = draw(st.sampled_from(["a", "c"]))
            return [f"{target} = {target} {op} {other}"]
        if kind == "append":
            return [f"b.append({draw(st.sampled_from(['a', 'c', str(const)]))})"]
        inner = ["    " + line for _ in range(draw(st.integers(1, 2))) for line in statement(depth + 1)]
        if kind == "if":
            return [f"if {draw(st.sampled_from(['a', 'c', 'len(b)']))} > {const}:"] + inner
        if kind == "for":
            return [f"for x{depth} in xs:", f"    a = a + x{depth}"] + inner
        counter = f"i{depth}"
        return [f"{counter} = 0", f"while {counter} < {abs(const) + 1}:", f"    {counter} += 1"] + inner

    for _ in range(draw(st.integers(1, 4))):
        body += statement(0)
    body.append(draw(st.sampled_from(["return a", "return b", "return (a, c)", "return [a, b]"])))
    return "def f(xs):\n" + "".join(f"    {line}\n" for line in body)


@given(small_programs(), st.lists(st.integers(-5, 5), max_size=4))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_programs_trace_consistently(source: str, xs: list[int]) -> None:
    from factory.tasks.questions import questions_from_trace

    namespace: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), namespace)
    expected = namespace["f"](list(xs))
    trace = run(source, repr(xs), max_steps=100_000)
    assert trace["status"] == "ok"
    assert ast.literal_eval(trace["output_repr"]) == expected
    # The last step is the entry's return statement: the value a plain call returns.
    last = trace["steps"][-1]
    assert last["func"] == "f"
    assert source.splitlines()[last["line"] - 1].strip().startswith("return")
    n_lines = len(source.splitlines())
    for question in questions_from_trace(source, trace):
        if question["family"] == "next_line":
            assert question["answer"] == -1 or 1 <= question["answer"] <= n_lines
        elif question["family"] == "state" and question["answer"] != "Nil":
            value_text, _, type_name = question["answer"].rpartition("; ")
            assert type(ast.literal_eval(value_text)).__name__ == type_name


def test_trace_job_runs_the_program_the_parent_compiled() -> None:
    from factory.program_code import portable_code

    shipped = portable_code("def f(x):\n    y = x * 2\n    return y\n")
    result = trace_job(
        {"source": "def f(x):\n    return ('other', x)\n", "args": "21", "code": shipped, **LIMITS}
    )
    assert result["output_repr"] == "42"
    assert [s["line"] for s in result["steps"]] == [2, 3]


def test_limits_left_out_are_the_trace_params_defaults() -> None:
    """``trace_call``'s defaults are ``TraceParams``'; a job's payload must carry its limits."""
    defaults = TraceParams()
    loop = "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    # Two steps per iteration: n iterations take about 2n steps.
    assert trace_call(loop, "f", str(defaults.max_steps // 4))["status"] == "ok"
    assert trace_call(loop, "f", str(defaults.max_steps))["status"] == "too_many_steps"
    long = trace_call("def f(n):\n    s = 'x' * n\n    return 0\n", "f", str(2 * defaults.max_repr))
    (state,) = [s for s in long["states"] if s["var"] == "s"]
    assert state["truncated"] and len(state["repr"]) == defaults.max_repr
    assert trace_job({"source": loop, "args": "1", **LIMITS})["status"] == "ok"
    for name in LIMITS:
        with pytest.raises(KeyError, match=name):
            trace_job({"source": loop, "args": "1", **{k: v for k, v in LIMITS.items() if k != name}})
