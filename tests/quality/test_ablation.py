"""Statement removal (the Python analysis facet) and the ablation job that runs the variants."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from factory.languages import language
from factory.languages.python.ablation import (
    branch_tests,
    negated_tests,
    once_variants,
    passthrough_variants,
    removable_statements,
    removal_variants,
)
from factory.quality import ablation
from factory.quality.ablation import (
    ablation_of,
    ablation_payload,
    inert_operations_many,
    irrelevant_statements,
    irrelevant_statements_many,
)
from factory.quality.jobs import BUDGET, INCOMPLETE, KINDS, ablation_job, arcs_job
from factory.sandbox.trusted.pool import WorkerPool

PROGRAM = '''def g(a):
    """Doc."""
    b = a + 1; c = 2
    return b
def f(xs, n):
    total = 0
    for x in xs:
        if x > n:
            total += x
        elif x == n:
            total -= 1
        else:
            pass
    s = ['é',
         'ü']  # a comment
    while n < 3: n += 1
    return g(total) + len(s)
'''


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2, kinds=KINDS, timeout_s=2.0) as p:
        yield p


def test_variants_keep_every_line_in_place_and_parse() -> None:
    variants = removal_variants(PROGRAM)
    assert [v.line for v in variants] == [3, 3, 6, 7, 8, 9, 11, 14, 16, 16]
    original = PROGRAM.splitlines()
    for line, source in variants:
        ast.parse(source)
        lines = source.splitlines()
        assert len(lines) == len(original)
        changed = [i + 1 for i, (a, b) in enumerate(zip(original, lines, strict=True)) if a != b]
        assert changed[0] == line and "pass" in lines[line - 1]
        # Every line after the statement's own ones is untouched (it moves nowhere).
        assert lines[changed[-1] :] == original[changed[-1] :]


def test_whole_compound_statements_go_and_the_block_keeps_a_pass() -> None:
    variants = dict((line, source) for line, source in removal_variants(PROGRAM) if line in (7, 14))
    loop = variants[7].splitlines()
    assert loop[6] == "    pass" and loop[7:13] == [""] * 6  # the loop with its if, elif and else
    assert loop[13] == "    s = ['é',"
    assert variants[14].splitlines()[13:15] == ["    pass  # a comment", ""]
    only = "def f(x):\n    if x:\n        y = 1\n    return x\n"
    inner = dict(removal_variants(only))[3]
    assert inner.splitlines()[2] == "        pass"  # the if's block is not left empty


def test_returns_definitions_docstrings_passes_and_elif_clauses_stay() -> None:
    kinds = {type(node) for node in removable_statements(PROGRAM)}
    assert not kinds & {ast.Return, ast.FunctionDef, ast.Pass}
    lines = [node.lineno for node in removable_statements(PROGRAM)]
    assert 2 not in lines  # the docstring
    assert 10 not in lines  # the elif goes with its if (line 8), never alone
    assert removal_variants("import math\ndef f(x):\n    return math.floor(x)\n") == []  # module level stays


def test_branch_tests_are_the_if_and_elif_lines() -> None:
    assert branch_tests(PROGRAM) == [8, 10]
    nested = (
        "def f(a):\n    if a:\n        x = 1\n    else:\n        if a > 2:\n            x = 2\n    return a\n"
    )
    assert branch_tests(nested) == [2, 5]  # an if inside an else is an if test of its own


def test_the_language_facet_serves_the_variants() -> None:
    facet = language("python").facet("analysis")
    assert [tuple(v) for v in facet.removal_variants(PROGRAM)] == ablation.removal_variants(PROGRAM)
    assert [tuple(v) for v in facet.passthrough_variants(PROGRAM)] == ablation.passthrough_variants(PROGRAM)
    assert [tuple(v) for v in facet.once_variants(LOOPS)] == once_variants(LOOPS)
    assert list(facet.branch_tests(PROGRAM)) == [8, 10]


CHAIN = """def f(xs, n):
    total = 0
    unused = len(xs)
    i = 0
    while i < n:
        total += i
        i += 1
    dead = total * 2
    dead2 = dead + 1
    return total + len(xs)
"""


def test_irrelevant_statements_once_and_iteratively(pool: WorkerPool) -> None:
    args = ["[1, 2], 3", "[], 5"]
    # Alone, `dead` matters: without it `dead2` raises NameError. Once `dead2` is gone, it does not.
    assert irrelevant_statements(CHAIN, "f", args, pool, iterative=False) == [3, 9]
    assert irrelevant_statements(CHAIN, "f", args, pool, iterative=True) == [3, 8, 9]
    many = irrelevant_statements_many(
        [(CHAIN, "f", args), (PROGRAM, "f", ["[1, 5, 2], 2"])], pool, iterative=True
    )
    assert many[0] == [3, 8, 9]
    # `c = 2` in the helper is never read; the while loop only changes `n`, which is not read after
    # it: the loop goes whole. Its `n += 1` alone matters: without it the loop never ends.
    assert many[1] == [3, 16]
    once = ablation.irrelevant_statements(PROGRAM, "f", ["[1, 5, 2], 2"], pool, iterative=False)
    assert once == [3, 16]


def test_a_variant_that_loops_forever_is_stopped_by_its_budget_and_counts_as_changed() -> None:
    source = "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    variants = [text for line, text in removal_variants(source)]
    result = ablation_job(ablation_payload(source, "f", variants, ["4"]))
    assert result["status"] == "ok"
    lines = [line for line, _ in removal_variants(source)]
    assert dict(zip(lines, result["changed"], strict=True)) == {2: [0], 3: [0], 4: [0]}
    # The budget: 2 x the original's 10 line events + 1000, then the run stops.
    assert result["events"] < 3 * 1100
    from factory.quality.jobs import _Runner

    assert _Runner("f", 10_000)(variants[-1], "4", 50)[0] == (BUDGET, None)


def test_an_exception_in_a_variant_counts_as_changed_and_only_first_inputs_run_in_full() -> None:
    source = "def f(s):\n    t = s.upper()\n    u = s.lower()\n    return t\n"
    variants = [text for _, text in removal_variants(source)]
    result = ablation_job(ablation_payload(source, "f", variants, ["'ab'", "'cd'", "'ef'"], full=1))
    # `t = ...` gone: NameError on the first input (so the others are not run); `u` changes nothing.
    assert result["changed"] == [[0], []]


def test_first_hit_stops_at_the_first_change_until_a_variant_needs_more_inputs() -> None:
    """``first_hit``: while every variant changes one of the ``full`` inputs, each stops at its
    first; once one changes none of them, every variant's hits are what they are without it."""
    source = "def f(n):\n    a = n + 1\n    if n > 5:\n        a = -a\n    return a\n"
    variants = [text for _, text in removal_variants(source)]
    inputs = ["1", "2", "9", "10"]  # the `if` matters only on the last two
    for full in (4, 2):
        plain = ablation_job(ablation_payload(source, "f", variants, inputs, full=full))
        first = ablation_job(ablation_payload(source, "f", variants, inputs, full=full, first_hit=True))
        if full == 4:  # every variant changes one of the four: one hit each, fewer runs
            assert plain["changed"] == [[0, 1, 2, 3], [2, 3], [2, 3]]
            assert first["changed"] == [[0], [2], [2]] and first["events"] < plain["events"]
        else:  # the `if` changes neither of the first two: every hit is wanted, as without first_hit
            assert first["changed"] == plain["changed"] == [[0, 1], [2, 3], [2, 3]]


def test_stop_ends_the_job_at_the_first_irrelevant_statement() -> None:
    source = "def f(s):\n    a = 1\n    t = s.upper()\n    return t\n"
    variants = [text for _, text in removal_variants(source)]
    result = ablation_job(ablation_payload(source, "f", variants, ["'ab'"], stop=len(variants)))
    assert result["changed"] == [[], None]
    assert ablation_of(removal_variants(source), result).irrelevant() == [0]
    # `stop` counts the variants whose emptiness stops the job: past them, every variant runs
    beyond = ablation_job(ablation_payload(source, "f", variants, ["'ab'"], stop=0))
    assert beyond["changed"] == [[], [0]]


def test_a_job_out_of_its_total_budget_leaves_the_rest_relevant() -> None:
    source = "def f(n):\n    x = 0\n    for i in range(n):\n        x += i\n    y = 3\n    return x\n"
    variants = removal_variants(source)
    payload = ablation_payload(source, "f", [text for _, text in variants], ["300"])
    payload["total"] = 1500  # the original takes ~600 line events, a variant as many
    result = ablation_job(payload)
    assert result["status"] == INCOMPLETE
    run = ablation_of(variants, result)
    assert not run.complete and run.changed[-1] is None
    assert run.irrelevant() == []  # `y = 3` was never tried: not called irrelevant


def test_a_failed_job_calls_nothing_irrelevant() -> None:
    variants = removal_variants(CHAIN)
    assert ablation_of(variants, {"status": "resource_limit"}).irrelevant() == []


def test_arcs_give_each_if_test_its_outcomes() -> None:
    source = "def f(xs):\n    n = 0\n    for x in xs:\n        if x > 1:\n            n += 1\n    return n\n"
    result = arcs_job({"source": source, "entry": "f", "args": "[0, 5]"})
    assert result["status"] == "ok" and result["output_repr"] == "1"
    assert {b for a, b in result["arcs"] if a == 4} == {3, 5}  # false: back to the loop; true: the body
    assert result["lines"] == [2, 3, 4, 5, 6]
    only = arcs_job({"source": source, "entry": "f", "args": "[0, 5]", "tests": [4]})
    assert {a for a, _ in only["arcs"]} == {4} and only["lines"] == result["lines"]
    last = arcs_job({"source": "def f(x):\n    if x:\n        return 1\n", "entry": "f", "args": "0"})
    assert (2, 0) in last["arcs"]  # the frame returned right after the test


def test_negated_tests_negate_one_test_each_and_keep_every_line_in_place() -> None:
    source = (
        "def f(x, ys):\n"
        "    if x > 0 and ys:\n"
        "        x += 1\n"
        "    elif x == -1:  # a comment\n"
        "        x = 2\n"
        "    while x < 3:\n"
        "        x += 1\n"
        "    return x\n"
    )
    flips = negated_tests(source)
    assert [line for line, _ in flips] == [2, 4]  # the if and the elif; never the while
    assert flips[0].source.splitlines()[1] == "    if not (x > 0 and ys):"
    assert flips[1].source.splitlines()[3] == "    elif not (x == -1):  # a comment"
    for _, variant in flips:
        ast.parse(variant)
        changed = [a for a, b in zip(source.splitlines(), variant.splitlines(), strict=True) if a != b]
        assert len(changed) == 1
    namespace: dict = {}
    exec(flips[0].source, namespace)
    assert namespace["f"](1, [1]) == 3 and namespace["f"](-1, []) == 3  # -1: the if's body, then the loop


PASSING = """import math
def g(arg):
    ratio = arg / 2.0
    return ratio
def f(word, n):
    trimmed = word.strip()
    total: int = n + 1
    total = max(total, len(word))
    xs = [1, 2]
    m = [v + n for v in xs]
    k = math.ceil(n)
    y = g(
        word)  # a comment
    z = y
    w = (lambda q: q + n)(k)
    return (trimmed, total, m, k, y, z, w)
"""


def _changed_lines(variant: str, source: str) -> list[str]:
    return [a for a, b in zip(variant.splitlines(), source.splitlines(), strict=True) if a != b]


def test_passthrough_variants_pass_each_variable_the_value_reads() -> None:
    variants = passthrough_variants(PASSING)
    got = [(line, _changed_lines(text, PASSING)) for line, text in variants]
    assert got == [
        (3, ["    ratio = arg"]),
        (6, ["    trimmed = word"]),
        (7, ["    total: int = n"]),
        (8, ["    total = word"]),  # not `total` (the removal), not the called `max` and `len`
        (10, ["    m = n"]),  # `v` is the comprehension's
        (10, ["    m = xs"]),
        (11, ["    k = n"]),  # not the module `math`
        (12, ["    y = word  # a comment", ""]),  # the value's second line left blank
        (15, ["    w = n"]),  # not the lambda's `q`
        (15, ["    w = k"]),
    ]
    for _, text in variants:  # every variant parses, every line where it was
        ast.parse(text)
        assert len(text.splitlines()) == len(PASSING.splitlines())
    assert passthrough_variants("def f(x):\n    y = [1, -2]\n    z = x\n    return (y, z)\n") == []


def test_an_inert_operation_is_one_whose_pass_through_changes_no_outcome(pool: WorkerPool) -> None:
    source = "def f(word, n):\n    trimmed = word.strip()\n    top = max(n, 0)\n    return (trimmed, top)\n"
    assert inert_operations_many([(source, "f", ["'a', 3", "'b', 5"])], pool) == [[2, 3]]
    assert inert_operations_many([(source, "f", ["' a', 3", "'b', -5"])], pool) == [[]]
    assert inert_operations_many([(source, "f", ["' a', 3", "'b', 5"])], pool) == [[3]]


LOOPS = """def g(xs):
    for i in range(3):
        xs.append(i)
    return xs
def f(xs, n):
    count = 0
    while count < 4:
        for j in range(1):
            xs.append(j)
        count += 1
    while count < n:
        count += 1
    for k in range(2, 5):
        xs.append(k)
    return g(xs)
"""


def test_once_variants_set_each_literal_loop_count_to_one() -> None:
    variants = once_variants(LOOPS)
    got = [(line, _changed_lines(text, LOOPS)) for line, text in variants]
    # not `range(1)` (already once), `count < n` (no literal), `range(2, 5)` (a start)
    assert got == [(2, ["    for i in range(1):"]), (7, ["    while count < 1:"])]


def test_a_loop_whose_repetitions_change_nothing_keeps_every_outcome() -> None:
    idle = (
        "def f(seen, word):\n    count = 0\n    while count < 3:\n"
        "        seen.add(word)\n        count += 1\n    return sorted(seen)\n"
    )
    busy = idle.replace("seen.add(word)", "seen.add(word + str(count))")
    for source, changed in ((idle, []), (busy, [0, 1])):
        ((_, variant),) = once_variants(source)
        result = ablation_job(ablation_payload(source, "f", [variant], ["set(), 'a'", "{'b'}, 'c'"]))
        assert result["changed"] == [changed]
