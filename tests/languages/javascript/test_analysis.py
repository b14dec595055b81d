"""JavaScript's statement analysis (the ``analysis`` facet) against hand-written expectations, and its
statement lines against the tracer's steps (docs/languages.md §6.3.1).

Line numbers count from the first line after the opening triple quote of each program.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from factory.languages.base import StatementLine
from factory.languages.javascript import analysis
from factory.languages.javascript.trace_calls import trace_calls_js
from factory.languages.javascript.values import parser
from tests.languages.javascript.test_tracer import SAME_OUTPUT
from tests.trace.test_tracer import program

LOOPS = program(
    """
    function g(x) {
      return x * 2;
    }
    function f(xs) {
      let total = 0;
      for (let i = 0; i < xs.length; i++) {
        if (xs[i] > 2) {
          total += g(xs[i]);
        } else if (xs[i] === 0) {
          continue;
        } else {
          total -= 1;
        }
      }
      let n = total;
      while (n > 10) {
        n = n - 10;
      }
      return n;
    }
    """
)

TRY = program(
    """
    function f(s) {
      const seen = new Set();
      let out = "";
      for (const ch of s) {
        seen.add(ch);
      }
      try {
        out = JSON.parse(
          s,
        );
      } catch (e) {
        out = null;
      }
      return [seen.size,
        out];
    }
    """
)

NESTED = program(
    """
    function f(n) {
      function inner(k) {
        return k + n;
      }
      let i = 0; let t = 0;
      do {
        t += inner(i);
        i++;
      } while (i < n);
      const ys = [1, 2].map((y) => {
        return y * t;
      });
      return ys;
    }
    """
)


def _line(
    line: int, kind: str, func: str, conditional: bool, first: bool, *rest: object
) -> tuple[object, ...]:
    return (line, kind, func, conditional, first, *rest)


def _rows(info: dict[int, StatementLine]) -> list[tuple[object, ...]]:
    return [tuple(info[line])[:-1] for line in sorted(info)]


def test_statement_lines_of_loops_branches_and_a_helper() -> None:
    info = analysis.statement_info(LOOPS)
    assert _rows(info) == [
        _line(2, "return", "g", False, True, (), ("x",), (), False),
        _line(5, "simple", "f", False, True, ("total",), (), (), True),
        _line(6, "for", "f", False, False, ("i",), ("i", "xs"), (), False),
        _line(7, "if", "f", True, False, (), ("xs", "i"), (), False),
        _line(8, "simple", "f", True, False, ("total",), ("total", "g", "xs", "i"), ("g",), False),
        _line(9, "if", "f", True, False, (), ("xs", "i"), (), False),  # else if: at its `if`
        _line(10, "continue", "f", True, False, (), (), (), False),
        _line(12, "simple", "f", True, False, ("total",), ("total",), (), False),
        _line(15, "simple", "f", False, False, ("n",), ("total",), (), False),
        _line(16, "while", "f", False, False, (), ("n",), (), False),
        _line(17, "simple", "f", True, False, ("n",), ("n",), (), False),
        _line(19, "return", "f", False, False, (), ("n",), (), False),
    ]
    assert info[2].local_names == {"x"}
    assert info[5].local_names == {"xs", "total", "i", "n"}
    assert analysis.program_features(LOOPS) == {
        "n_lines": 20,
        "n_loops": 2,
        "n_branches": 2,
        "has_helper": True,
        "max_depth": 2,
    }
    assert not analysis.has_multiline_statement(LOOPS)
    assert analysis.branch_tests(LOOPS) == [7, 9]


def test_try_catch_for_of_over_a_string_and_a_multi_line_statement() -> None:
    info = analysis.statement_info(TRY)
    assert _rows(info) == [
        _line(2, "simple", "f", False, True, ("seen",), ("Set",), (), True),  # `new Set()`: a literal
        _line(3, "simple", "f", False, False, ("out",), (), (), True),
        _line(4, "for", "f", False, False, ("ch",), ("s",), (), False),
        _line(5, "simple", "f", True, False, (), ("seen", "ch"), (), False),
        _line(7, "try", "f", False, False, (), (), (), False),
        _line(8, "simple", "f", True, False, ("out",), ("JSON", "s"), (), False),
        _line(11, "catch", "f", True, False, ("e",), (), (), False),
        _line(12, "simple", "f", True, False, ("out",), (), (), True),
        _line(14, "return", "f", False, False, (), ("seen", "out"), (), False),
    ]
    assert info[2].local_names == {"s", "seen", "out", "ch", "e"}
    assert analysis.has_multiline_statement(TRY)
    assert analysis.program_features(TRY) == {
        "n_lines": 16,
        "n_loops": 1,
        "n_branches": 1,
        "has_helper": False,
        "max_depth": 1,
    }
    assert analysis.branch_tests(TRY) == []


def test_do_while_a_shared_line_a_nested_declaration_and_a_callback() -> None:
    info = analysis.statement_info(NESTED)
    assert _rows(info) == [
        _line(3, "return", "inner", False, True, (), ("k", "n"), (), False),
        _line(5, "simple", "f", False, True, ("i",), (), (), True),  # the line's first statement
        _line(7, "simple", "f", True, False, ("t",), ("t", "inner", "i"), ("inner",), False),
        _line(8, "simple", "f", True, False, ("i",), ("i",), (), False),
        _line(9, "while", "f", False, False, (), ("i", "n"), (), False),  # do…while: at `while`
        _line(10, "simple", "f", False, False, ("ys",), (), (), False),
        _line(11, "return", "<anonymous>", False, True, (), ("y", "t"), (), False),
        _line(13, "return", "f", False, False, (), ("ys",), (), False),
    ]
    assert info[5].local_names == {"n", "i", "t", "ys"} and info[11].local_names == {"y"}
    assert (
        analysis.program_features(NESTED)["has_helper"] and analysis.program_features(NESTED)["n_loops"] == 1
    )
    assert analysis.program_features(NESTED)["max_depth"] == 1


@pytest.mark.parametrize(("source", "args"), [(LOOPS, "[3, 0, 1, 9]"), (TRY, '"abca"'), (NESTED, "3")])
def test_every_step_of_a_trace_is_at_a_statement_line_of_its_function(source: str, args: str) -> None:
    info = analysis.statement_info(source)
    trace = trace_calls_js([(source, "f", args)])[0]
    assert trace["status"] == "ok", trace["error"]
    for step in trace["steps"]:
        assert info[step["line"]].func == step["func"], step
    assert info[trace["steps"][0]["line"]].first_in_function
    # every frame's first step is at its function's first statement line
    firsts = {stmt.func: line for line, stmt in info.items() if stmt.first_in_function}
    seen: set[str] = set()
    for step in trace["steps"]:
        if step["func"] not in seen:
            seen.add(step["func"])
            assert step["line"] == firsts[step["func"]], step


def test_removal_variants_keep_every_other_line_in_place() -> None:
    variants = analysis.removal_variants(TRY)
    assert [line for line, _ in variants] == [2, 3, 4, 5, 7, 8, 12]  # never the return
    removed = dict(variants)[8].split("\n")
    assert removed[7:10] == ["    ;", "", ""] and removed[10] == "  } catch (e) {"
    assert dict(variants)[4].split("\n")[3:6] == ["  ;", "", ""]
    assert [line for line, _ in analysis.removal_variants(NESTED)] == [5, 5, 6, 7, 8, 10]
    assert [line for line, _ in analysis.removal_variants(LOOPS)] == [5, 6, 7, 8, 10, 12, 15, 16, 17]
    for source in (LOOPS, TRY, NESTED):
        for _, variant in analysis.removal_variants(source):
            assert variant.count("\n") == source.count("\n")
            assert not parser().parse(variant.encode()).root_node.has_error, variant


def test_negated_tests_negate_each_if_test_and_keep_every_line_in_place() -> None:
    flips = analysis.negated_tests(LOOPS)
    assert [line for line, _ in flips] == [7, 9]  # the if and the else if; never the loops' tests
    assert dict(flips)[7].split("\n")[6] == "    if (!(xs[i] > 2)) {"
    assert dict(flips)[9].split("\n")[8] == "    } else if (!(xs[i] === 0)) {"
    for _, variant in flips:
        assert variant.count("\n") == LOOPS.count("\n")
        assert not parser().parse(variant.encode()).root_node.has_error, variant
        assert sum(a != b for a, b in zip(LOOPS.split("\n"), variant.split("\n"), strict=True)) == 1


def test_a_removed_declaration_of_a_variable_read_later_fails_the_run() -> None:
    """The documented choice: the variant is kept; its run throws ReferenceError, a changed outcome."""
    variant = dict(analysis.removal_variants(LOOPS))[15]
    traced = trace_calls_js([(variant, "f", "[1]")])[0]
    assert traced["status"] == "error:ReferenceError"


def test_a_source_that_does_not_parse() -> None:
    with pytest.raises(SyntaxError):
        analysis.statement_info("function f( {")
    assert analysis.has_multiline_statement("function f( {") is False


def test_the_tracers_programs_steps_are_all_at_statement_lines() -> None:
    """Every step of the tracer's test programs (labels, for…in, destructuring, do…while on one
    line, callbacks ...) is at a statement line of its function, but where a line holds statements
    of two functions (a callback written on its caller's line: the line's first statement, the
    caller's, describes it); every removal variant parses."""
    traces = trace_calls_js([(source, "f", args) for source, args in SAME_OUTPUT])
    for (source, _), trace in zip(SAME_OUTPUT, traces, strict=True):
        info = analysis.statement_info(source)
        funcs_at: dict[int, set[str]] = {}
        for step in trace["steps"]:
            funcs_at.setdefault(step["line"], set()).add(step["func"])
        for step in trace["steps"]:
            line = step["line"]
            assert line in info, (source, step)
            assert info[line].func == step["func"] or len(funcs_at[line]) > 1, (source, step)
        for _, variant in analysis.removal_variants(source):
            assert not parser().parse(variant.encode()).root_node.has_error, variant


def test_a_header_spanning_lines_is_a_multi_line_statement() -> None:
    header = "function f(a) {\n  if (a > 1 &&\n      a < 5) {\n    return 1;\n  }\n  return 0;\n}\n"
    body_only = "function f(a) {\n  if (a > 1) {\n    return 1;\n  }\n  return 0;\n}\n"
    assert analysis.has_multiline_statement(header)
    assert not analysis.has_multiline_statement(body_only)
    assert analysis.statement_info(header)[2].names == ("a",)


PASSTHROUGH = program(
    """
    function f(word, n) {
      const trimmed = word.trim();
      let total = n + 1;
      total = Math.max(total, word.length);
      const xs = [1, 2];
      const m = xs.map((v) => v + n);
      return [trimmed, total, m];
    }
    """
)


def _with_line(source: str, line: int, text: str) -> str:
    lines = source.split("\n")
    lines[line - 1] = text
    return "\n".join(lines)


def test_passthrough_variants_replace_a_value_by_each_variable_it_reads() -> None:
    """Not the assigned name, a callee, a builtin (``Math``), a property name, a literal value, nor
    an arrow function's parameter; a method call's object is read."""
    assert analysis.passthrough_variants(PASSTHROUGH) == [
        (2, _with_line(PASSTHROUGH, 2, "  const trimmed = word;")),
        (3, _with_line(PASSTHROUGH, 3, "  let total = n;")),
        (4, _with_line(PASSTHROUGH, 4, "  total = word;")),
        (6, _with_line(PASSTHROUGH, 6, "  const m = xs;")),
        (6, _with_line(PASSTHROUGH, 6, "  const m = n;")),
    ]


def test_a_multi_line_value_is_replaced_in_place_and_no_line_moves() -> None:
    source = program(
        """
        function f(a, b) {
          const s = Math.min(
            a,
            b) + 1; // low
          return s;
        }
        """
    )
    variants = analysis.passthrough_variants(source)
    assert [line for line, _ in variants] == [2, 2]
    assert variants[0][1].split("\n")[:5] == [
        "function f(a, b) {",
        "  const s = a; // low",
        "",
        "",
        "  return s;",
    ]
    assert variants[1][1].split("\n")[1] == "  const s = b; // low"
    for _, variant in variants:
        assert variant.count("\n") == source.count("\n")
        assert not parser().parse(variant.encode()).root_node.has_error, variant


def test_no_passthrough_for_two_declarators_an_augmented_or_member_assignment_or_a_plain_value() -> None:
    source = program(
        """
        function f(a, xs, o) {
          let b = a + 1, c = a * 2;
          b += a;
          xs[0] = a + 1;
          o.k = a + 1;
          let [d, e] = xs.slice(1);
          let g = a;
          g = "a";
          const h = { k: [1, "x"], z: null };
          return [b, c, d, e, g, h];
        }
        """
    )
    assert analysis.passthrough_variants(source) == []


def test_passthrough_variants_in_nested_functions_but_not_at_the_module_level() -> None:
    source = program(
        """
        const top = Math.abs(-2) + 1;
        let seed = top * 2;
        function f(n) {
          function helper(k) {
            const twice = k * 2;
            return twice;
          }
          const ys = [1, 2].map((y) => {
            const z = y * n;
            return z;
          });
          const g = function (w) { let u; u = w + ys.length; return u; };
          return helper(n) + g(seed);
        }
        """
    )
    variants = analysis.passthrough_variants(source)
    assert [(line, text.split("\n")[line - 1]) for line, text in variants] == [
        (5, "    const twice = k;"),
        (8, "  const ys = n;"),  # the callback's free variable; `y` is its parameter
        (9, "    const z = y;"),
        (9, "    const z = n;"),
        (12, "  const g = ys;"),  # not `w` nor `u`: bound inside the function
        (12, "  const g = function (w) { let u; u = w; return u; };"),
        (12, "  const g = function (w) { let u; u = ys; return u; };"),
    ]  # never line 1 or 2 (the module level)


ONCE = program(
    """
    function f(xs) {
      let total = 0;
      let count = 0;
      while (count < 3) {
        total += xs.length;
        count += 1;
      }
      for (let i = 0; i < 4; i++) {
        total = total * 2;
      }
      for (let j = 0; j < 1; j++) {
        total += j;
      }
      return total;
    }
    """
)


def test_once_variants_set_each_loops_literal_count_to_1() -> None:
    """The ``while`` and the first ``for``; the last loop's count is 1 already."""
    assert analysis.once_variants(ONCE) == [
        (4, _with_line(ONCE, 4, "  while (count < 1) {")),
        (8, _with_line(ONCE, 8, "  for (let i = 0; i < 1; i++) {")),
    ]


def test_once_variants_in_a_helper_and_a_nested_loop_outer_first() -> None:
    source = program(
        """
        const top = [];
        for (let t = 0; t < 5; t++) {
          top.push(t);
        }
        function helper(s) {
          let out = "";
          let k = 0;
          while (k < 2) {
            out += s;
            k += 1;
          }
          return out;
        }
        function f(n) {
          let acc = 0;
          for (let i = 0; i < 3; i++) {
            for (let j = 0; j < 10; j++) {
              acc += i * j + n;
            }
          }
          return helper(String(acc));
        }
        """
    )
    variants = analysis.once_variants(source)
    assert [(line, text.split("\n")[line - 1]) for line, text in variants] == [
        (8, "  while (k < 1) {"),
        (16, "  for (let i = 0; i < 1; i++) {"),
        (17, "    for (let j = 0; j < 1; j++) {"),
    ]  # never line 2 (the module level)
    for _, variant in variants:
        assert sum(a != b for a, b in zip(source.split("\n"), variant.split("\n"), strict=True)) == 1


def test_no_once_variant_for_other_comparisons_a_variable_bound_or_a_for_of() -> None:
    source = program(
        """
        function f(xs, n) {
          let count = 0;
          for (let i = 0; i <= 3; i++) {
            count += i;
          }
          while (count < n) {
            count += 1;
          }
          while (3 > count) {
            count += 1;
          }
          for (const x of xs) {
            count += x;
          }
          do {
            count += 1;
          } while (count < 30);
          for (;;) {
            break;
          }
          return count;
        }
        """
    )
    assert analysis.once_variants(source) == []


@pytest.mark.parametrize("make", [analysis.passthrough_variants, analysis.once_variants])
def test_variants_of_the_tracers_programs_parse_and_keep_every_line(
    make: Callable[[str], list[tuple[int, str]]],
) -> None:
    made = [(source, *v) for source in [*(s for s, _ in SAME_OUTPUT), ONCE] for v in make(source)]
    assert made  # (the tracer's programs have no loop with a literal count: ONCE has two)
    for source, line, variant in made:
        assert variant.count("\n") == source.count("\n")
        assert variant.split("\n")[: line - 1] == source.split("\n")[: line - 1]
        assert not parser().parse(variant.encode()).root_node.has_error, variant
    with pytest.raises(SyntaxError):
        make("function f( {")
