"""The JavaScript tracer against hand-written traces: each rule of docs/languages.md §6.3.

Expected steps, states and answers are written out by hand from the source (not copied from a
run). Line numbers count from the first line after the opening triple quote of each program; the
comment at the end of a line is its number.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from factory.errors import UserError
from factory.languages.javascript import trace_calls
from factory.languages.javascript.instrument import InstrumentError, instrument
from factory.languages.javascript.trace_calls import trace_call_js, trace_calls_js
from factory.languages.javascript.values import js_map, js_set, literal
from factory.trace.stored import trace_digest
from factory.trace.tracer import trace_call
from tests.trace.test_tracer import program, states  # the Python tracer's test helpers: same shapes

NODE = shutil.which("node")
CANONICAL_JS = Path(__file__).resolve().parents[3] / "factory" / "languages" / "javascript" / "canonical.js"
NIL = "Nil"


def run(source: str, args: str, **kwargs: Any) -> dict[str, Any]:
    result = trace_call_js(source, "f", args, **kwargs)
    assert result["status"] != "tracer_error", result["error"]
    return result


def lines(trace: dict[str, Any]) -> list[int]:
    assert [s["step"] for s in trace["steps"]] == list(range(1, len(trace["steps"]) + 1))
    return [s["line"] for s in trace["steps"]]


def funcs(trace: dict[str, Any]) -> list[str]:
    return [s["func"] for s in trace["steps"]]


def next_line(trace: dict[str, Any], line: int, k: int) -> int:
    """The line after the k-th execution of ``line``: -1 when nothing follows or it never runs k times."""
    at = [i for i, s in enumerate(trace["steps"]) if s["line"] == line]
    if len(at) < k or at[k - 1] + 1 == len(trace["steps"]):
        return -1
    return int(trace["steps"][at[k - 1] + 1]["line"])


def value_after(trace: dict[str, Any], line: int, k: int, var: str) -> str | None:
    """``"repr; type"`` of ``var`` changed by the k-th execution of ``line``; None when that step
    changed nothing of that name; Nil when the line never runs k times."""
    at = [s["step"] for s in trace["steps"] if s["line"] == line]
    if len(at) < k:
        return NIL
    return states(trace).get(at[k - 1], {}).get(var)


# --- hand-written traces ----------------------------------------------------------------------

LOOPS = program(
    """
    function f(n) {
      let total = 0;
      for (let i = 0; i < n; i++) {
        total += i;
      }
      let j = n;
      while (j > 0) {
        j -= 2;
      }
      return total + j;
    }
    """
)


def test_for_and_while_headers_are_a_step_per_test() -> None:
    trace = run(LOOPS, "3")
    assert trace["status"] == "ok" and trace["output_repr"] == "2" and trace["output_type"] == "number"
    assert lines(trace) == [2, 3, 4, 3, 4, 3, 4, 3, 6, 7, 8, 7, 8, 7, 10]
    assert set(funcs(trace)) == {"f"}
    # `total += 0` changes nothing; the update `i++` is the header step's change; `n` is an argument.
    assert states(trace) == {
        1: {"total": "0; number"},
        2: {"i": "0; number"},
        4: {"i": "1; number"},
        5: {"total": "1; number"},
        6: {"i": "2; number"},
        7: {"total": "3; number"},
        8: {"i": "3; number"},
        9: {"j": "3; number"},
        11: {"j": "1; number"},
        13: {"j": "-1; number"},
    }
    assert next_line(trace, 3, 3) == 4
    assert next_line(trace, 3, 4) == 6  # the exhausting test leaves the loop
    assert next_line(trace, 7, 3) == 10  # the while exit
    assert next_line(trace, 10, 1) == -1  # the entry returns
    assert next_line(trace, 3, 5) == -1  # never runs 5 times
    assert value_after(trace, 8, 2, "j") == "-1; number"
    assert value_after(trace, 4, 1, "total") is None
    assert value_after(trace, 4, 4, "total") == NIL


HELPER = program(
    """
    function isEven(v) {
      const r = v % 2;
      return r === 0;
    }
    function f(xs) {
      for (const x of xs) {
        if (isEven(x)) {
          return x;
        }
      }
      return -1;
    }
    """
)


def test_early_return_and_a_helper_in_its_own_frame() -> None:
    trace = run(HELPER, "[3, 4, 5]")
    assert trace["output_repr"] == "4"
    assert lines(trace) == [6, 7, 2, 3, 6, 7, 2, 3, 8]
    assert funcs(trace) == ["f", "f", "isEven", "isEven", "f", "f", "isEven", "isEven", "f"]
    # `r` is isEven's (its steps 3 and 7); `v`, an argument, is never new.
    assert states(trace) == {
        1: {"x": "3; number"},
        3: {"r": "1; number"},
        5: {"x": "4; number"},
        7: {"r": "0; number"},
    }
    assert next_line(trace, 7, 1) == 2  # into the helper
    assert next_line(trace, 3, 1) == 6  # back in the caller: its next step
    assert next_line(trace, 8, 1) == -1
    assert next_line(trace, 11, 1) == -1  # never runs
    assert value_after(trace, 11, 1, "x") == NIL
    assert value_after(trace, 2, 2, "r") == "0; number"


STRING_LOOP = program(
    """
    function f(s) {
      let out = "";
      for (const ch of s) {
        out = ch + out;
      }
      return out;
    }
    """
)


def test_for_of_over_a_string_with_its_exhausting_step() -> None:
    trace = run(STRING_LOOP, '"abc"')
    assert trace["output_repr"] == '"cba"' and trace["output_type"] == "string"
    assert lines(trace) == [2, 3, 4, 3, 4, 3, 4, 3, 6]
    assert states(trace) == {
        1: {"out": '""; string'},
        2: {"ch": '"a"; string'},
        3: {"out": '"a"; string'},
        4: {"ch": '"b"; string'},
        5: {"out": '"ba"; string'},
        6: {"ch": '"c"; string'},
        7: {"out": '"cba"; string'},
    }
    assert next_line(trace, 3, 4) == 6
    assert value_after(trace, 3, 2, "ch") == '"b"; string'
    assert value_after(trace, 3, 4, "ch") is None  # the exhausting test binds nothing


TRY = program(
    """
    function parse(v) {
      if (v < 0) {
        throw new RangeError("neg");
      }
      return v * 2;
    }
    function f(xs) {
      let ok = 0;
      let bad = 0;
      for (const x of xs) {
        try {
          ok += parse(x);
        } catch (e) {
          bad += 1;
        } finally {
          ok += 0;
        }
      }
      return [ok, bad];
    }
    """
)


def test_try_catch_finally() -> None:
    trace = run(TRY, "[1, -1]")
    assert trace["output_repr"] == "[2, 1]" and trace["output_type"] == "array"
    # `try` and `catch` are steps, `finally` is not; the throw goes to the caller's catch.
    assert lines(trace) == [8, 9, 10, 11, 12, 2, 5, 16, 10, 11, 12, 2, 3, 13, 14, 16, 10, 19]
    assert funcs(trace)[5:7] == ["parse", "parse"] and funcs(trace)[11:14] == ["parse", "parse", "f"]
    assert states(trace) == {
        1: {"ok": "0; number"},
        2: {"bad": "0; number"},
        3: {"x": "1; number"},
        5: {"ok": "2; number"},
        9: {"x": "-1; number"},
        14: {"e": "<RangeError: neg>; RangeError"},
        15: {"bad": "1; number"},
    }
    assert not next(s for s in trace["states"] if s["var"] == "e")["literal"]
    assert next_line(trace, 3, 1) == 13  # the throw lands in the caller's catch
    assert next_line(trace, 12, 2) == 2
    assert next_line(trace, 14, 1) == 16
    assert value_after(trace, 14, 1, "bad") == "1; number"
    assert value_after(trace, 14, 2, "bad") == NIL


MULTI_LINE = program(
    """
    function f(a, b) {
      const total = a +
        b *
        2;
      const pair = {
        sum: total,
        diff: a - b,
      };
      if (total > 5 &&
          pair.diff < 0) {
        return pair;
      }
      return null;
    }
    """
)


def test_a_multi_line_statement_is_one_step_at_its_first_line() -> None:
    trace = run(MULTI_LINE, "1, 3")
    assert trace["output_repr"] == '{"sum": 7, "diff": -2}' and trace["output_type"] == "object"
    assert lines(trace) == [2, 5, 9, 11]
    assert states(trace) == {1: {"total": "7; number"}, 2: {"pair": '{"sum": 7, "diff": -2}; object'}}
    assert next_line(trace, 9, 1) == 11
    assert next_line(trace, 3, 1) == -1  # a continuation line is never a step
    assert value_after(trace, 13, 1, "pair") == NIL


ELSE_IF = program(
    """
    function grade(n) {
      if (n >= 90) {
        return "A";
      } else if (n >= 80) {
        return "B";
      } else if (n >= 70) {
        return "C";
      } else {
        return "F";
      }
    }
    function f(xs) {
      const out = [];
      for (const x of xs) {
        out.push(grade(x));
      }
      return out.join("");
    }
    """
)


def test_else_if_chains_test_each_condition_at_its_line() -> None:
    trace = run(ELSE_IF, "[95, 75, 10]")
    assert trace["output_repr"] == '"ACF"'
    assert lines(trace) == [13, 14, 15, 2, 3, 14, 15, 2, 4, 6, 7, 14, 15, 2, 4, 6, 9, 14, 17]
    assert states(trace) == {
        1: {"out": "[]; array"},
        2: {"x": "95; number"},
        3: {"out": '["A"]; array'},  # mutated by the call: captured when the statement is done
        6: {"x": "75; number"},
        7: {"out": '["A", "C"]; array'},
        12: {"x": "10; number"},
        13: {"out": '["A", "C", "F"]; array'},
    }
    assert next_line(trace, 4, 2) == 6
    assert next_line(trace, 3, 1) == 14
    assert next_line(trace, 5, 1) == -1  # never runs
    assert 8 not in lines(trace)  # `else {` is never a step


BREAK_CONTINUE = program(
    """
    function f(xs) {
      let s = 0;
      let i = 0;
      while (true) {
        i++;
        if (i > xs.length) {
          break;
        }
        if (xs[i - 1] < 0) {
          continue;
        }
        s += xs[i - 1];
      }
      return s;
    }
    """
)


def test_break_and_continue_are_steps() -> None:
    trace = run(BREAK_CONTINUE, "[2, -1]")
    assert trace["output_repr"] == "2"
    assert lines(trace) == [2, 3, 4, 5, 6, 9, 12, 4, 5, 6, 9, 10, 4, 5, 6, 7, 14]
    assert states(trace) == {
        1: {"s": "0; number"},
        2: {"i": "0; number"},
        4: {"i": "1; number"},
        7: {"s": "2; number"},
        9: {"i": "2; number"},
        14: {"i": "3; number"},
    }
    assert next_line(trace, 10, 1) == 4  # continue: back to the test
    assert next_line(trace, 7, 1) == 14  # break: past the loop
    assert value_after(trace, 5, 3, "i") == "3; number"


BLOCK_SCOPE = program(
    """
    function f(n) {
      let acc = [];
      for (let i = 0; i < n; i++) {
        const flag = true;
        acc.push(flag);
      }
      return acc;
    }
    """
)


def test_a_block_scoped_variable_is_new_each_time_its_block_runs() -> None:
    trace = run(BLOCK_SCOPE, "2")
    assert lines(trace) == [2, 3, 4, 5, 3, 4, 5, 3, 7]
    # `flag` is out of scope at the header: forgotten, so its next binding is new (Python's
    # `flag = True` in a loop would be reported once).
    assert states(trace) == {
        1: {"acc": "[]; array"},
        2: {"i": "0; number"},
        3: {"flag": "true; boolean"},
        4: {"acc": "[true]; array"},
        5: {"i": "1; number"},
        6: {"flag": "true; boolean"},
        7: {"acc": "[true, true]; array"},
        8: {"i": "2; number"},
    }


FOR_IN_DO = program(
    """
    function f(o) {
      const keys = [];
      for (const k in o) {
        keys.push(k);
      }
      let n = 0;
      do {
        n += 1;
      } while (n < 2);
      return keys.concat([n]);
    }
    """
)


def test_for_in_and_do_while() -> None:
    trace = run(FOR_IN_DO, '{"b": 1, "a": 2}')
    assert trace["output_repr"] == '["b", "a", 2]'
    # do…while's test is its step, at the line of `while`.
    assert lines(trace) == [2, 3, 4, 3, 4, 3, 6, 8, 9, 8, 9, 10]
    assert states(trace) == {
        1: {"keys": "[]; array"},
        2: {"k": '"b"; string'},
        3: {"keys": '["b"]; array'},
        4: {"k": '"a"; string'},
        5: {"keys": '["b", "a"]; array'},
        7: {"n": "0; number"},
        8: {"n": "1; number"},
        10: {"n": "2; number"},
    }


ONE_LINE = program(
    """
    function f(xs) {
      let t = 0; for (const x of xs) t += x;
      const [a, ...rest] = xs, sq = (v) => {
        const w = v * v;
        return w;
      };
      return sq(a) + rest.length + t;
    }
    """
)


def test_statements_sharing_a_line_destructuring_and_an_arrow_helper() -> None:
    trace = run(ONE_LINE, "[3, 1]")
    assert trace["output_repr"] == "14"
    # Each statement is a step, even on a line with another (the loop body included).
    assert lines(trace) == [2, 2, 2, 2, 2, 2, 3, 7, 4, 5]
    assert funcs(trace) == ["f"] * 8 + ["sq", "sq"]
    assert states(trace) == {
        1: {"t": "0; number"},
        2: {"x": "3; number"},
        3: {"t": "3; number"},
        4: {"x": "1; number"},
        5: {"t": "4; number"},
        7: {"a": "3; number", "rest": "[1]; array", "sq": "<function sq>; function"},
        9: {"w": "9; number"},
    }
    assert not next(s for s in trace["states"] if s["var"] == "sq")["literal"]


# --- statuses and limits ------------------------------------------------------------------------


def test_the_step_budget_stops_an_infinite_loop_deterministically() -> None:
    source = program(
        """
        function f() {
          let i = 0;
          while (true) {
            i++;
          }
        }
        """
    )
    first, second = trace_calls_js([(source, "f", ""), (source, "f", "")], max_steps=50)
    assert first == second
    assert first["status"] == "too_many_steps" and first["error"] is None
    assert lines(first) == [2] + [3, 4] * 24 + [3]
    assert len(first["steps"]) == 50


@pytest.mark.parametrize(
    "body",
    [
        "for (;;) { try { while (true) {} } catch (e) { } }",  # the catch rethrows the stop
        "try { while (true) {} } finally { return 1; }",  # swallowed: the status says it anyway
        "while (true) { try { while (true) {} } catch { } }",
    ],
)
def test_a_program_cannot_swallow_the_step_limit(body: str) -> None:
    trace = run(f"function f() {{\n  {body}\n}}\n", "", max_steps=30)
    assert trace["status"] == "too_many_steps"


def test_the_reserved_prefix_is_refused() -> None:
    source = "function f() {\n  const $$evil = 1;\n  return $$evil;\n}\n"
    with pytest.raises(InstrumentError, match=r"reserved for the tracer"):
        instrument(source)
    trace = trace_call_js(source, "f", "")
    assert trace["status"] == "bad_program" and "reserved" in trace["error"]


def test_the_instrumented_program_keeps_every_line_number() -> None:
    for source in (LOOPS, TRY, MULTI_LINE, ONE_LINE):
        code = instrument(source).code
        assert code.count("\n") == source.count("\n") + 1  # the wrapper's own last line
        for original, instrumented in zip(source.split("\n"), code.split("\n"), strict=False):
            assert original.split()[:1] == [] or original.split()[0] in instrumented


@pytest.mark.parametrize("odd", ["\r", "\u2028", "\f", "\x85"])
def test_a_line_break_that_would_shift_line_numbers_is_refused(odd: str) -> None:
    with pytest.raises(InstrumentError, match="line break"):
        instrument(f"function f() {{{odd}  return 1;\n}}\n")
    instrument("function f() {\r\n  return 1;\r\n}\r\n")  # \r\n is one break for both


@pytest.mark.parametrize(
    ("source", "args", "status"),
    [
        ("function f(x) {\n  return x.y.z;\n}\n", "{}", "error:TypeError"),
        ("function f(n) {\n  return f(n + 1);\n}\n", "0", "recursion"),
        ("function f() {\n  throw 3;\n}\n", "", "error:number"),
        ("class E extends Error {}\n", "", "bad_program"),  # classes are refused
        ("function g() {}\n", "", "bad_program"),  # no entry
        ("function f( {\n", "", "bad_program"),
        ("function f() {\n  return 0 / 0;\n}\n", "", "non_literal"),
        ("function f() {\n  return typeof require + typeof process + typeof Date;\n}\n", "", "ok"),
    ],
)
def test_statuses(source: str, args: str, status: str) -> None:
    trace = trace_call_js(source, "f", args, max_steps=1_000_000)  # the stack overflows first
    assert trace["status"] == status, trace["error"]
    if status == "ok":  # a fresh context: builtins only
        assert trace["output_repr"] == '"undefinedundefinedundefined"'


def test_the_traced_program_cannot_reach_the_host_realm() -> None:
    """The context is the runner's (context.js): a plain ``{}`` global handed the program this
    realm's ``Function`` through ``this.constructor.constructor``, and with it ``process``."""
    source = 'function f() {\n  return typeof globalThis.constructor.constructor("return process")();\n}\n'
    trace = trace_call_js(source, "f", "")
    assert trace["status"] == "error:EvalError", trace  # the context's own Function: no strings
    escape = 'function f() {\n  return typeof (() => 1).constructor("return process")();\n}\n'
    assert trace_call_js(escape, "f", "")["status"] == "error:EvalError"
    shown = 'function f() {\n  console.log("x");\n  return typeof Intl + typeof Uint8Array;\n}\n'
    assert trace_call_js(shown, "f", "")["output_repr"] == '"undefinedundefined"'


def test_bad_args_and_limits_raise() -> None:
    with pytest.raises(UserError):
        trace_call_js(LOOPS, "f", "n + 1")
    with pytest.raises(UserError):
        trace_call_js(LOOPS, "f", "3", max_steps=0)


def test_long_values_are_truncated_and_huge_ones_stop_the_trace() -> None:
    source = program(
        """
        function f(n) {
          const xs = [];
          for (let i = 0; i < n; i++) xs.push(i);
          return xs.length;
        }
        """
    )
    trace = run(source, "100", max_repr=20)
    last = [s for s in trace["states"] if s["var"] == "xs"][-1]
    assert last["truncated"] and not last["literal"] and last["repr"] == "[0, 1, 2, 3, 4, 5, 6"
    assert run(source, "2000", max_state_bytes=1024)["status"] == "state_too_large"


def test_a_case_that_exhausts_the_heap_ends_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_calls, "HEAP_MB", 64)
    bomb = "function f() {\n  const a = [];\n  while (true) a.push(new Array(1e5).fill(0));\n}\n"
    cases = [(LOOPS, "f", "3"), (bomb, "f", ""), (LOOPS, "f", "2")]
    done = trace_calls_js(cases, capture=False, max_steps=10**6)
    assert [r["status"] for r in done] == ["ok", "memory", "ok"]
    assert done[1]["error"] == "node ran out of heap (64 MiB)"
    assert done[2]["output_repr"] == "1"  # 0 + 1, and j: 2, 0


def test_a_long_value_is_cut_where_its_full_text_would_be() -> None:
    """Long values are printed from the tracer's copy, up to ``max_repr``: the same prefix as the
    canonical text (Python's value model prints it here)."""
    source = program(
        """
        function f(n) {
          const s = new Set();
          const m = new Map();
          const o = {};
          const a = [];
          for (let i = 0; i < n; i++) {
            s.add(i * 7);
            m.set("k" + i, [i, null]);
            o["p" + i] = {v: "x".repeat(i % 3)};
            a.push([i, [true]]);
          }
          return n;
        }
        """
    )
    n = 40
    trace = run(source, str(n), max_repr=64)
    last = {s["var"]: s for s in trace["states"]}
    expected = {
        "s": literal(js_set(i * 7 for i in range(n))),
        "m": literal(js_map((f"k{i}", [i, None]) for i in range(n))),
        "o": literal({f"p{i}": {"v": "x" * (i % 3)} for i in range(n)}),
        "a": literal([[i, [True]] for i in range(n)]),
    }
    for var, text in expected.items():
        assert len(text) > 64
        assert (last[var]["repr"], last[var]["truncated"], last[var]["literal"]) == (text[:64], True, False)


def test_capture_off_gives_the_same_steps_and_no_states() -> None:
    full = run(HELPER, "[3, 4, 5]")
    bare = run(HELPER, "[3, 4, 5]", capture=False)
    assert bare["steps"] == full["steps"] and bare["states"] == []


# --- the instrumented program behaves as the original ------------------------------------------

SAME_OUTPUT = [
    (LOOPS, "0"),
    (LOOPS, "5"),
    (HELPER, "[1, 3]"),
    (HELPER, "[]"),
    (STRING_LOOP, '"héllo"'),
    (TRY, "[-2, 3, -4]"),
    (MULTI_LINE, "10, 1"),
    (ELSE_IF, "[80, 89, 70, 0]"),
    (BREAK_CONTINUE, "[-1, -2, 5]"),
    (BLOCK_SCOPE, "4"),
    (FOR_IN_DO, '{"2": "x", "z": 1, "0": 3}'),
    (ONE_LINE, "[5, 6, 7]"),
    ("function f(x) {\n  return x.y.z;\n}\n", "{}"),
    ("function f(s) {\n  if (s) var v = 1; else v = 2;\n  return v;\n}\n", "false"),
    (
        "function f(xs) {\n  let n = 0;\n  outer: for (const a of xs) {\n    for (const b of xs) {\n"
        "      if (b > a) continue outer;\n      if (a === 3) break outer;\n      n += a * b;\n    }\n  }\n"
        "  return n;\n}\n",
        "[1, 2, 3, 4]",
    ),
    (
        "function f(m) {\n  const out = new Map();\n  for (const [k, v] of m) out.set(v, k);\n"
        "  return out;\n}\n",
        'new Map([["a", 1], ["b", 2]])',
    ),
    (
        "function f(xs) {\n  const s = new Set();\n  for (const x of xs) { s.add(x % 3); }\n  return s;\n}\n",
        "[1, 2, 3, 4, 5]",
    ),
    ("function f(o) {\n  const {a = 1, ...rest} = o;\n  return [a, rest];\n}\n", '{"b": 2}'),
    (
        "function f(xs) {\n  return xs.filter((x) => x > 1).map((x) => {\n    const y = x * 10;\n"
        "    return y;\n  });\n}\n",
        "[1, 2, 3]",
    ),
    (
        "function f(n) {\n  'use strict';\n  let a = 0, b = 1;\n  while (n-- > 0) [a, b] = [b, a + b];\n"
        "  return a;\n}\n",
        "10",
    ),
    (
        "function f(s) {\n  try {\n    return JSON.parse(s);\n  } catch ({message}) {\n"
        "    return message.length > 0;\n  }\n}\n",
        '"{bad"',
    ),
    ("function f(s) {\n  try {\n    return JSON.parse(s);\n  } catch {\n    return null;\n  }\n}\n", '"[1]"'),
    (
        "function f(xs) {\n  let i = 0;\n  do i++; while (i < xs.length && xs[i] !== 0)\n  return i;\n}\n",
        "[5, 6, 0, 1]",
    ),
    (
        "function f(o) {\n  const seen = [];\n  for (const k in o) {\n    seen.push(k);\n"
        "    if (k === 'a') delete o.b;\n  }\n  return seen;\n}\n",
        '{"a": 1, "b": 2, "c": 3}',
    ),
    ("function f(x) {\n  if (x > 2) throw new TypeError('big');\n  return x;\n}\n", "3"),
    ("function f(x) {\n  for (const c of x) {}\n}\n", "5"),  # not iterable
    (
        "function f(x) {\n  try {\n    for (const c of x) {}\n  } catch (e) {\n"
        "    return [e instanceof TypeError, e.constructor === TypeError];\n  }\n}\n",
        "null",
    ),
    ("function f(n) {\n  for (var i = 0, j = n; i < j; i++, j--);\n  return [i, j];\n}\n", "7"),
    ("const K = 3;\nconst add = (a, b) => a + b;\nfunction f(x) {\n  return add(x, K);\n}\n", "4"),
    ("function f(t) {\n  const s = `${t}-${t.length}`;\n  return s.split('-');\n}\n", '"ab"'),
    ("function f(xs) {\n  return xs.sort((a, b) => { return b - a; });\n}\n", "[3, 1, 2]"),
    (
        "function f(n) {\n  function inner(k) {\n    return k + n;\n  }\n  let s = 0;\n"
        "  for (let i = 0; i < n; i++) s += inner(i);\n  return s;\n}\n",
        "4",
    ),
    ("function f() {\n  return undefined;\n}\n", ""),
    ("function f(n) {\n  let x;\n  if (n) x = [n, { k: null }];\n  return x;\n}\n", "2"),
]


def _plain_node(cases: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Each program run as a plain CommonJS module by one ``node`` process (no instrumentation, no
    ``vm``), its output printed with canonical.js: ``{"ok": text}``, ``{"non_literal": ...}`` or
    ``{"error": constructor name}``."""
    assert NODE is not None, "node (Node.js >= 20) is not on PATH"
    folder = Path(__import__("tempfile").mkdtemp(prefix="jsplain-"))
    try:
        for i, (source, args) in enumerate(cases):
            (folder / f"p{i}.js").write_text(f"{source}\n;module.exports = () => f({args}\n);\n")
        driver = f"""
        const {{ canonical }} = require({json.dumps(str(CANONICAL_JS))});
        const out = [];
        for (let i = 0; i < {len(cases)}; i++) {{
          try {{
            const value = require({json.dumps(str(folder))} + '/p' + i + '.js')();
            try {{ out.push({{ ok: canonical(value) }}); }} catch {{ out.push({{ non_literal: true }}); }}
          }} catch (e) {{
            out.push({{ error: typeof e === 'object' && e !== null ? e.constructor.name : typeof e }});
          }}
        }}
        console.log(JSON.stringify(out));
        """
        done = subprocess.run([NODE, "-e", driver], capture_output=True, text=True, timeout=120, check=True)
        return list(json.loads(done.stdout))
    finally:
        shutil.rmtree(folder)


def test_instrumented_programs_give_what_plain_node_gives() -> None:
    assert len(SAME_OUTPUT) >= 30
    plain = _plain_node(SAME_OUTPUT)
    traced = trace_calls_js([(s, "f", a) for s, a in SAME_OUTPUT])
    for (source, args), expected, trace in zip(SAME_OUTPUT, plain, traced, strict=True):
        where = f"{source!r} on {args}"
        assert trace["status"] != "tracer_error", (where, trace["error"])
        if "ok" in expected:
            assert (trace["status"], trace["output_repr"]) == ("ok", expected["ok"]), where
        elif "error" in expected:
            assert trace["status"] == f"error:{expected['error']}", where
        else:
            assert trace["status"] == "non_literal", where
        assert trace["steps"], where


def test_the_result_has_the_python_tracers_shape_and_runs_agree() -> None:
    python = trace_call("def f(x):\n    y = x + 1\n    return y\n", "f", "1")
    first, second = trace_calls_js([(HELPER, "f", "[3, 4, 5]")] * 2)
    assert first.keys() == python.keys()
    assert first["steps"][0].keys() == python["steps"][0].keys()
    assert first["states"][0].keys() == python["states"][0].keys()
    assert first == second and trace_digest(first) == trace_digest(second)
    assert trace_digest(first) != trace_digest(run(HELPER, "[4]"))
