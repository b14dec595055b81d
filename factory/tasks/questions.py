"""Every question a trace supports (docs/design.md §4, §5), before sampling.

``questions_from_trace(source, trace)`` returns the JSON of ``execverify questions --json``: one
dict per question, in the families ``output``, ``next_line``, ``state`` and ``coverage``. Each
question also carries ``informative`` (tags that say why it is worth asking: a branch point, a
loop header, a 2nd+ iteration, a call into a helper, a line that never runs, ...) and ``trivial``
(the answer is what a reader gets without reasoning: the next physical line, a constant
assignment, a line that runs in every call, ``-1`` after the entry's last statement, ``-1`` or
``Nil`` for a 2nd execution of a line that nothing can run again), so that the sampler can prefer
the hard ones. A state question also carries ``live``: its variable is read later in the execution
(a ``return`` reads what it returns); for a ``Nil`` question, read by another statement of its
function. Every question is still listed, whatever its tags: the golds are exact either way.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from factory import languages
from factory.languages import StatementLine
from factory.trace.source import CACHE_SIZE

#: How many lines that never run get a -1 / Nil question (the first ones in source order).
MAX_NEVER_RUN = 5
_LOOP_KINDS = frozenset({"for", "while"})  # statement kinds whose line runs once per iteration


def line_text(source: str, line: int) -> str:
    """The stripped text of ``line`` (1-based) of ``source``; ``"-1"`` for line -1."""
    if line == -1:
        return "-1"
    lines = source_lines(source)
    if not 1 <= line <= len(lines):
        raise ValueError(f"line {line} is outside the program (1..{len(lines)})")
    return lines[line - 1].strip()


@functools.lru_cache(maxsize=64)  # a case's questions ask about the same few lines
def source_lines(source: str) -> tuple[str, ...]:
    """The physical lines of ``source`` (``str.splitlines``), cached; line ``n`` is ``[n - 1]``."""
    return tuple(source.splitlines())


def questions_from_trace(
    source: str, trace: dict[str, Any], *, max_occurrence: int | None = None, language: str = "python"
) -> list[dict[str, Any]]:
    """Every question that ``trace`` (of ``source``) supports, before sampling.

    ``max_occurrence`` keeps, of a line's executions, only the first ``max_occurrence`` and the
    last (the ones worth asking about: the 2nd iteration, the loop exit); the tasks stage uses it
    so that a long trace does not cost a question per step. None: every question.

    Families and gold answers follow docs/design.md §4-§5: ``output`` once; ``next_line`` for every
    (line, occurrence) that occurs, plus (line, last occurrence + 1) and a few lines that never
    run, answered -1; ``state`` for every literal value changed at an occurrence, plus ``Nil``
    questions for occurrences that never happen; ``coverage`` for every statement line of the
    program's functions. A trace whose status is not ``ok`` supports none. ``language``: the
    registered name of the program's language, whose statement analysis reads ``source``.
    """
    if trace.get("status") != "ok":
        return []
    facts = _program_facts(source, language)
    info = facts.info
    steps = trace["steps"]
    lines = [s["line"] for s in steps]
    funcs = [s["func"] for s in steps]
    occurrence: list[int] = []
    counts: dict[int, int] = {}  # a plain dict: faster than a Counter here
    last_index: dict[int, int] = {}  # line -> the index of its last step
    for i, line in enumerate(lines):
        k = counts[line] = counts.get(line, 0) + 1
        occurrence.append(k)
        last_index[line] = i
    ran = set(counts)
    never = [line for line in facts.lines if line not in ran][:MAX_NEVER_RUN]
    repeatable = _repeatable(lines, funcs, facts)
    physical_next = facts.physical_next
    function_starts = facts.function_starts
    calling = facts.calling

    questions: list[dict[str, Any]] = [
        {
            "family": "output",
            "answer": trace["output_repr"],
            "answer_type": trace["output_type"],
            "informative": [],
            "trivial": False,
        }
    ]

    # Per line: the tags of its 1st and of its later executions (copied before they are added to).
    line_tags = facts.tags
    outside = ran.difference(line_tags)  # line events outside any statement line (rare)
    if outside:
        line_tags = {**line_tags, **dict.fromkeys(outside, _NO_STATEMENT_TAGS)}
    last = counts if max_occurrence is not None else {}

    # next_line (a long trace: the loop below is the hot one; _question is inlined in it)
    n = len(lines)
    except_lines = facts.except_lines
    append = questions.append
    for i in range(n):
        line, k = lines[i], occurrence[i]
        if max_occurrence is not None and max_occurrence < k < last[line]:
            continue
        tags = list(line_tags[line][k >= 2])
        if i + 1 == n:
            nxt = -1
            tags.append("last_step")
            # After the entry's return, or its body's last statement, nothing can follow; in a
            # recursive call it takes knowing that the callers' lines already ran.
            trivial = line in facts.ends_function and line not in repeatable
        else:
            nxt = lines[i + 1]
            other_func = funcs[i + 1] != funcs[i]
            if nxt in function_starts and (other_func or line in calling):
                tags.append("call")
            elif other_func:
                tags.append("return")
            if nxt in except_lines:
                tags.append("exception")
            trivial = nxt == physical_next.get(line)
        append(
            {
                "family": "next_line",
                "line": line,
                "occurrence": k,
                "answer": nxt,
                "informative": tags,
                "trivial": trivial,
            }
        )
    ran_lines = sorted(ran)
    for line in ran_lines:
        tags = [*line_tags[line][1], "never_runs"]
        # A line that nothing can run again: its next execution obviously never comes.
        trivial = line not in repeatable
        questions.append(_question("next_line", line, counts[line] + 1, -1, tags, trivial=trivial))
    for line in never:
        tags = [*line_tags[line][0], "never_runs"]
        questions.append(_question("next_line", line, 1, -1, tags, trivial=False))

    # state
    changed_at: dict[int, list[str]] = defaultdict(list)
    readers = facts.readers
    for state in trace["states"]:
        index = state["step"] - 1
        line, k = lines[index], occurrence[index]
        var = state["var"]
        changed = changed_at[line]
        if var not in changed:
            changed.append(var)
        if not state["literal"] or (max_occurrence is not None and max_occurrence < k < last[line]):
            continue
        stmt = info.get(line)
        tags = list(line_tags[line][k >= 2])
        if stmt is not None and var not in stmt.assigns:
            tags.append("mutation")  # changed by a call or an alias, not by an assignment
        if line in calling:
            tags.append("call")
        # `v = <literal>` gives the same answer at every occurrence: no reasoning needed.
        trivial = stmt is not None and stmt.constant and var in stmt.assigns
        answer = f"{state['repr']}; {state['type']}"
        # Read later: a statement of the same function that reads the variable runs after this step.
        live = any(last_index.get(r, -1) > index for r in readers.get((funcs[index], var), ()))
        questions.append(_state_question(line, k, var, answer, tags, trivial=trivial, live=live))
    for line in ran_lines + never:
        ran_line = line in ran
        k = counts[line] + 1 if ran_line else 1
        stmt = info.get(line)
        func = stmt.func if stmt is not None else ""
        # Up to two variables, live ones first: those changed at the line, else what it binds/reads.
        candidates = changed_at.get(line) or (_quiet_vars(stmt) if stmt is not None else [])
        live_vars = {v for v in candidates if readers.get((func, v), _NONE) - {line}}
        nil_vars = sorted(candidates, key=lambda v: v not in live_vars)[:2]  # stable: order kept
        trivial = ran_line and line not in repeatable
        for var in nil_vars:
            tags = [*line_tags[line][k >= 2], "never_runs"]
            questions.append(
                _state_question(line, k, var, "Nil", tags, trivial=trivial, live=var in live_vars)
            )

    # coverage
    entry = funcs[0] if funcs else None
    for line in facts.lines:
        stmt = info[line]
        executed = line in ran
        tags = (["conditional"] if stmt.conditional else []) + ([] if executed else ["never_runs"])
        questions.append(
            {
                "family": "coverage",
                "line": line,
                "answer": "YES" if executed else "NO",
                "informative": tags,
                # An unconditional statement of the entry that ran: no reasoning needed.
                "trivial": executed and not stmt.conditional and stmt.func == entry,
            }
        )
    return questions


#: Statement kinds that start handling a thrown exception (Python's ``except``, JavaScript's ``catch``).
_HANDLERS = frozenset({"except", "catch"})


@dataclass(frozen=True)
class _ProgramFacts:
    """What ``questions_from_trace`` reads of a program, whatever the trace: computed once per
    source (a program has several cases)."""

    info: Mapping[int, StatementLine]
    lines: list[int]  # the statement lines, sorted
    physical_next: dict[int, int]
    function_starts: frozenset[int]  # first statement lines of the functions
    except_lines: frozenset[int]
    calling: frozenset[int]  # lines that call one of the program's own functions
    tags: dict[int, tuple[tuple[str, ...], tuple[str, ...]]]  # of a 1st and of a later execution
    loop_headers: frozenset[int]
    ends_function: frozenset[int]  # a return, or an unconditional last statement of the body
    first_lines: dict[str, int]  # function -> its first statement line
    function_lines: dict[str, tuple[int, ...]]  # function -> its statement lines
    readers: dict[tuple[str, str], frozenset[int]]  # (function, variable) -> lines that read it


@functools.lru_cache(maxsize=CACHE_SIZE)
def _program_facts(source: str, language: str) -> _ProgramFacts:
    info = languages.language(language).facet("analysis").statement_info(source)
    helpers = {stmt.func for stmt in info.values()}  # the program's own functions
    physical = _physical_next(info)
    by_func: dict[str, list[int]] = defaultdict(list)
    readers: dict[tuple[str, str], list[int]] = defaultdict(list)
    for line in sorted(info):
        stmt = info[line]
        by_func[stmt.func].append(line)
        for name in stmt.names:
            readers[stmt.func, name].append(line)
    return _ProgramFacts(
        info=info,
        lines=sorted(info),
        physical_next=physical,
        function_starts=frozenset(stmt.line for stmt in info.values() if stmt.first_in_function),
        except_lines=frozenset(line for line, stmt in info.items() if stmt.kind in _HANDLERS),
        calling=frozenset(line for line, stmt in info.items() if any(name in helpers for name in stmt.calls)),
        tags={line: (tuple(_line_tags(stmt, 1)), tuple(_line_tags(stmt, 2))) for line, stmt in info.items()},
        loop_headers=frozenset(line for line, stmt in info.items() if stmt.kind in _LOOP_KINDS),
        ends_function=frozenset(
            line
            for line, stmt in info.items()
            if stmt.kind == "return"
            or (stmt.kind == "simple" and not stmt.conditional and line not in physical)
        ),
        first_lines={stmt.func: line for line, stmt in info.items() if stmt.first_in_function},
        function_lines={func: tuple(lines) for func, lines in by_func.items()},
        readers={key: frozenset(lines) for key, lines in readers.items()},
    )


def _question(
    family: str, line: int, k: int, answer: Any, tags: list[str], *, trivial: bool
) -> dict[str, Any]:
    """A question dict; ``tags`` is owned by the question from now on (no tag comes twice)."""
    return {
        "family": family,
        "line": line,
        "occurrence": k,
        "answer": answer,
        "informative": tags,
        "trivial": trivial,
    }


def _state_question(
    line: int, k: int, var: str, answer: str, tags: list[str], *, trivial: bool, live: bool
) -> dict[str, Any]:
    """A state question; ``var`` comes before ``answer``, as in docs/design.md §11."""
    return {
        "family": "state",
        "line": line,
        "occurrence": k,
        "var": var,
        "answer": answer,
        "informative": tags,
        "trivial": trivial,
        "live": live,
    }


def _repeatable(lines: list[int], funcs: list[str], facts: _ProgramFacts) -> set[int]:
    """The lines of the trace that the program could run once more: a question about their next
    execution needs the loop count or the number of calls, where other lines run at most once.

    Loop headers; the lines that ran between two runs of a loop header of their function (its
    body, as this trace shows it); and every line of a function entered more than once, entered
    from such a line, or entered unseen (``map(g, xs)``: no line calls ``g`` by name). An entry is
    a step at the function's first statement right after a line that calls it (the first step:
    the entry function). A body left in its first iteration (``break``, ``return``) is not seen
    as a loop body: its lines count as non-repeatable, so fewer questions are asked, none wrong.
    """
    info, first_lines, headers = facts.info, facts.first_lines, facts.loop_headers
    repeat = set(headers)
    seen: dict[str, list[int]] = defaultdict(list)  # function -> the lines of its steps, in order
    header_at: dict[int, int] = {}  # loop header -> its last position in its function's steps
    entries: dict[str, int] = {}
    sites: dict[str, set[int]] = defaultdict(set)  # function -> the lines that entered it
    previous: int | None = None
    for line, func in zip(lines, funcs, strict=True):
        steps = seen[func]
        if line in headers:
            at = header_at.get(line)
            if at is not None:
                repeat.update(steps[at + 1 :])
            header_at[line] = len(steps)
        steps.append(line)
        if line == first_lines.get(func):
            caller = info.get(previous) if previous is not None else None
            if previous is None or (caller is not None and func in caller.calls):
                entries[func] = entries.get(func, 0) + 1
                if previous is not None:
                    sites[func].add(previous)
        previous = line
    expanded: set[str] = set()
    grown = True
    while grown:  # a function entered from a repeatable line repeats: follow the calls
        grown = False
        for func in sorted(seen.keys() - expanded):
            if entries.get(func, 0) != 1 or not sites[func].isdisjoint(repeat):
                repeat.update(facts.function_lines.get(func, ()))
                expanded.add(func)
                grown = True
    return repeat


def _line_tags(stmt: StatementLine | None, k: int) -> list[str]:
    tags: list[str] = []
    if stmt is not None:
        if stmt.kind in ("if", "while", "match", "case") or stmt.kind in _HANDLERS:
            tags.append("branch")
        if stmt.kind in ("for", "while"):
            tags.append("loop_header")
    if k >= 2:
        tags.append("second_iteration")
    return tags


_NONE: frozenset[int] = frozenset()

# The tags of a line event outside any statement line (rare), 1st and later executions.
_NO_STATEMENT_TAGS = (tuple(_line_tags(None, 1)), tuple(_line_tags(None, 2)))


def _quiet_vars(stmt: StatementLine) -> list[str]:
    """Up to two variables to ask about at an occurrence that never happens, for a line where no
    variable ever changed: the names it binds, then the locals it reads."""
    candidates = list(stmt.assigns) + [n for n in stmt.names if n in stmt.local_names]
    return list(dict.fromkeys(candidates))[:2]


def _physical_next(info: Mapping[int, StatementLine]) -> dict[int, int]:
    """For each statement line, the next statement line of the same function in the source."""
    by_func: dict[str, list[int]] = defaultdict(list)
    for line in sorted(info):
        by_func[info[line].func].append(line)
    nxt: dict[int, int] = {}
    for func_lines in by_func.values():
        for a, b in zip(func_lines, func_lines[1:], strict=False):
            nxt[a] = b
    return nxt
