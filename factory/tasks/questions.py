"""Every question a trace supports (DESIGN §4, §5), before sampling.

``questions_from_trace(source, trace)`` returns the JSON of ``execverify questions --json``: one
dict per question, in the families ``output``, ``next_line``, ``state`` and ``coverage``. Each
question also carries ``informative`` (tags that say why it is worth asking: a branch point, a
loop header, a 2nd+ iteration, a call into a helper, a line that never runs, ...) and ``trivial``
(the answer is what a reader gets without reasoning: the next physical line, a constant
assignment, a line that runs in every call), so that the sampler can prefer the hard ones.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from factory.trace.source import CACHE_SIZE, child_nodes, program_nodes, walk

_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_KINDS = {
    ast.If: "if",
    ast.While: "while",
    ast.For: "for",
    ast.AsyncFor: "for",
    ast.Try: "try",
    ast.With: "with",
    ast.AsyncWith: "with",
    ast.Match: "match",
    ast.Return: "return",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.Raise: "raise",
    ast.FunctionDef: "def",
    ast.AsyncFunctionDef: "def",
    ast.ClassDef: "class",
}
# Statements that compile to no instruction, hence never have a line event.
_SILENT = (ast.Global, ast.Nonlocal)

#: How many lines that never run get a -1 / Nil question (the first ones in source order).
MAX_NEVER_RUN = 5


@dataclass(frozen=True)
class StatementLine:
    """What the source says about the statement that starts on one line."""

    line: int
    kind: str  # if, while, for, try, except, case, with, match, return, def, ..., simple
    func: str  # the innermost enclosing function
    conditional: bool  # inside an if/loop/try/except/match body of its function
    first_in_function: bool  # the first statement of its function's body
    assigns: tuple[str, ...]  # names bound by the statement itself (targets, loop variables)
    names: tuple[str, ...]  # names the statement reads
    calls: tuple[str, ...]  # names of the functions it calls by simple name
    constant: bool  # `v = <literal>`: its state answer needs no reasoning
    local_names: frozenset[str] = field(default=frozenset())  # the function's params and locals


def line_text(source: str, line: int) -> str:
    """The stripped text of ``line`` (1-based) of ``source``; ``"-1"`` for line -1."""
    if line == -1:
        return "-1"
    lines = _source_lines(source)
    if not 1 <= line <= len(lines):
        raise ValueError(f"line {line} is outside the program (1..{len(lines)})")
    return lines[line - 1].strip()


@functools.lru_cache(maxsize=64)  # a case's questions ask about the same few lines
def _source_lines(source: str) -> tuple[str, ...]:
    return tuple(source.splitlines())


def statement_lines(source: str) -> dict[int, StatementLine]:
    """The lines that start a statement inside a function body, which a trace can reach.

    Module-level statements (they run untraced, when the program is loaded), docstrings and
    ``global``/``nonlocal`` (no instruction, hence no line event) are left out. ``except`` and
    ``case`` headers count as statements: Python reports line events on them.
    """
    return dict(_statement_lines(source))


@functools.lru_cache(maxsize=CACHE_SIZE)  # as the parse it reads
def _statement_lines(source: str) -> dict[int, StatementLine]:
    found: dict[int, StatementLine] = {}
    for node in program_nodes(source):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending: dict[int, dict[str, Any]] = {}
            local_names = _parameter_names(node)
            _collect(node.body, node.name, False, found, pending, local_names, first=True)
            frozen = frozenset(local_names)
            for line, fields in pending.items():
                found[line] = StatementLine(line=line, local_names=frozen, **fields)
    return found


def _collect(
    block: list[Any],
    func: str,
    conditional: bool,
    found: dict[int, StatementLine],
    pending: dict[int, dict[str, Any]],
    local_names: list[str],
    *,
    first: bool = False,
) -> None:
    """Describe the statements of ``block`` (and of its nested blocks) into ``pending``, unless
    their line is described already; add the names they bind to ``local_names``."""
    for index, node in enumerate(block):
        if isinstance(node, _SILENT):
            continue
        if (
            first
            and index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue  # a docstring
        line = _first_line(node)
        if isinstance(node, ast.ExceptHandler):
            kind = "except"
        elif isinstance(node, ast.match_case):
            kind = "case"
        else:
            kind = _KINDS.get(type(node), "simple")
        scope = isinstance(node, _SCOPES)
        new = line not in found and line not in pending
        walked = _walk_expr(_header_nodes(node)) if new or not scope else []
        stored, read, called, walrus = _expr_names(walked)
        if not scope:
            # The function's locals are the names stored by its own statements (nested
            # functions and classes keep theirs).
            local_names += stored
        if new:
            pending[line] = {
                "kind": kind,
                "func": func,
                "conditional": conditional,
                "first_in_function": first,
                "assigns": _assigned(node, walrus),
                "names": tuple(dict.fromkeys(read)),
                "calls": tuple(dict.fromkeys(called)),
                "constant": _constant_assignment(node),
            }
        first = False
        if scope:
            continue  # their bodies run in other frames; FunctionDefs are walked on their own
        for name in _BLOCK_FIELDS:
            inner = getattr(node, name, None)
            if inner:
                # The body of `with` is no branch; everything else may be skipped or repeated.
                inner_conditional = conditional or not isinstance(node, (ast.With, ast.AsyncWith))
                _collect(inner, func, inner_conditional, found, pending, local_names)


def _first_line(node: Any) -> int:
    if isinstance(node, ast.match_case):
        return node.pattern.lineno
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


def _header_nodes(node: Any) -> list[ast.AST]:
    """The parts of a statement that run on its own line event (not its body)."""
    if isinstance(node, ast.match_case):
        return [node.pattern] + ([node.guard] if node.guard else [])
    out: list[ast.AST] = []
    for name in node._fields:
        if name in _BLOCK_FIELDS:
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out += [child for child in value if isinstance(child, ast.AST)]
    return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _walk_expr(nodes: list[ast.AST]) -> list[ast.AST]:
    """Nodes of expressions, not descending into nested scopes (lambdas keep their own names)."""
    out: list[ast.AST] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, _SCOPES):
            continue
        stack += child_nodes(node)
    return out


def _expr_names(walked: list[ast.AST]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Of the nodes of ``_walk_expr``, in their order: names stored, names loaded, functions
    called by simple name, and walrus targets."""
    stored: list[str] = []
    read: list[str] = []
    called: list[str] = []
    walrus: list[str] = []
    for n in walked:
        kind = type(n)
        if kind is ast.Name:
            ctx = type(n.ctx)
            if ctx is ast.Store:
                stored.append(n.id)
            elif ctx is ast.Load:
                read.append(n.id)
        elif kind is ast.Call:
            if type(n.func) is ast.Name:
                called.append(n.func.id)
        elif kind is ast.NamedExpr:
            walrus.append(n.target.id)
    return stored, read, called, walrus


def _target_names(target: ast.AST) -> list[str]:
    return [n.id for n in walk(target) if type(n) is ast.Name]


def _assigned(node: Any, walrus: list[str]) -> tuple[str, ...]:
    """Names bound by ``node``; ``walrus``: the walrus targets in its header (``_expr_names``)."""
    names: list[str] = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            names += _target_names(target)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        names += _target_names(node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                names += _target_names(item.optional_vars)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.append(node.name)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        names.append(node.name)
    if not isinstance(node, (_SCOPES, ast.match_case)):
        names += walrus  # walrus targets anywhere in the statement's own expressions
    return tuple(dict.fromkeys(names))


def _constant_assignment(node: Any) -> bool:
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        try:
            ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        return True
    return False


def _parameter_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


# ---------------------------------------------------------------------------------------------


def questions_from_trace(
    source: str, trace: dict[str, Any], *, max_occurrence: int | None = None
) -> list[dict[str, Any]]:
    """Every question that ``trace`` (of ``source``) supports, before sampling.

    ``max_occurrence`` keeps, of a line's executions, only the first ``max_occurrence`` and the
    last (the ones worth asking about: the 2nd iteration, the loop exit); the tasks stage uses it
    so that a long trace does not cost a question per step. None: every question.

    Families and gold answers follow DESIGN §4-§5: ``output`` once; ``next_line`` for every
    (line, occurrence) that occurs, plus (line, last occurrence + 1) and a few lines that never
    run, answered -1; ``state`` for every literal value changed at an occurrence, plus ``Nil``
    questions for occurrences that never happen; ``coverage`` for every statement line of the
    program's functions. A trace whose status is not ``ok`` supports none.
    """
    if trace.get("status") != "ok":
        return []
    facts = _program_facts(source)
    info = facts.info
    steps = trace["steps"]
    lines = [s["line"] for s in steps]
    funcs = [s["func"] for s in steps]
    occurrence: list[int] = []
    counts: dict[int, int] = {}  # a plain dict: faster than a Counter here
    for line in lines:
        k = counts[line] = counts.get(line, 0) + 1
        occurrence.append(k)
    ran = set(counts)
    never = [line for line in facts.lines if line not in ran][:MAX_NEVER_RUN]
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
    for line in ran.difference(line_tags):  # a line event outside any statement line (rare)
        line_tags = {**line_tags, line: _NO_STATEMENT_TAGS}
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
        else:
            nxt = lines[i + 1]
            other_func = funcs[i + 1] != funcs[i]
            if nxt in function_starts and (other_func or line in calling):
                tags.append("call")
            elif other_func:
                tags.append("return")
            if nxt in except_lines:
                tags.append("exception")
        append(
            {
                "family": "next_line",
                "line": line,
                "occurrence": k,
                "answer": nxt,
                "informative": tags,
                "trivial": nxt == physical_next.get(line),
            }
        )
    ran_lines = sorted(ran)
    for line in ran_lines:
        tags = [*line_tags[line][1], "never_runs"]
        questions.append(_question("next_line", line, counts[line] + 1, -1, tags, trivial=False))
    for line in never:
        tags = [*line_tags[line][0], "never_runs"]
        questions.append(_question("next_line", line, 1, -1, tags, trivial=False))

    # state
    changed_at: dict[int, list[str]] = defaultdict(list)
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
        questions.append(_state_question(line, k, var, answer, tags, trivial=trivial))
    for line in ran_lines + never:
        stmt = info.get(line)
        k = counts[line] + 1 if line in ran else 1
        for var in _nil_vars(stmt, changed_at.get(line, [])):
            tags = [*line_tags[line][k >= 2], "never_runs"]
            questions.append(_state_question(line, k, var, "Nil", tags, trivial=False))

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


@dataclass(frozen=True)
class _ProgramFacts:
    """What ``questions_from_trace`` reads of a program, whatever the trace: computed once per
    source (a program has several cases)."""

    info: dict[int, StatementLine]
    lines: list[int]  # the statement lines, sorted
    physical_next: dict[int, int]
    function_starts: frozenset[int]  # first statement lines of the functions
    except_lines: frozenset[int]
    calling: frozenset[int]  # lines that call one of the program's own functions
    tags: dict[int, tuple[tuple[str, ...], tuple[str, ...]]]  # of a 1st and of a later execution


_NO_STATEMENT_TAGS: tuple[tuple[str, ...], tuple[str, ...]] = ((), ("second_iteration",))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _program_facts(source: str) -> _ProgramFacts:
    info = _statement_lines(source)
    helpers = {stmt.func for stmt in info.values()}  # the program's own functions
    return _ProgramFacts(
        info=info,
        lines=sorted(info),
        physical_next=_physical_next(info),
        function_starts=frozenset(stmt.line for stmt in info.values() if stmt.first_in_function),
        except_lines=frozenset(line for line, stmt in info.items() if stmt.kind == "except"),
        calling=frozenset(line for line, stmt in info.items() if any(name in helpers for name in stmt.calls)),
        tags={line: (tuple(_line_tags(stmt, 1)), tuple(_line_tags(stmt, 2))) for line, stmt in info.items()},
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
    line: int, k: int, var: str, answer: str, tags: list[str], *, trivial: bool
) -> dict[str, Any]:
    """A state question; ``var`` comes before ``answer``, as in DESIGN §11."""
    return {
        "family": "state",
        "line": line,
        "occurrence": k,
        "var": var,
        "answer": answer,
        "informative": tags,
        "trivial": trivial,
    }


def _line_tags(stmt: StatementLine | None, k: int) -> list[str]:
    tags: list[str] = []
    if stmt is not None:
        if stmt.kind in ("if", "while", "match", "case", "except"):
            tags.append("branch")
        if stmt.kind in ("for", "while"):
            tags.append("loop_header")
    if k >= 2:
        tags.append("second_iteration")
    return tags


def _nil_vars(stmt: StatementLine | None, changed: list[str]) -> list[str]:
    """Up to two variables to ask about at an occurrence that never happens."""
    if changed:
        return changed[:2]
    if stmt is None:
        return []
    candidates = list(stmt.assigns) + [n for n in stmt.names if n in stmt.local_names]
    return list(dict.fromkeys(candidates))[:2]


def _physical_next(info: dict[int, StatementLine]) -> dict[int, int]:
    """For each statement line, the next statement line of the same function in the source."""
    by_func: dict[str, list[int]] = defaultdict(list)
    for line in sorted(info):
        by_func[info[line].func].append(line)
    nxt: dict[int, int] = {}
    for func_lines in by_func.values():
        for a, b in zip(func_lines, func_lines[1:], strict=False):
            nxt[a] = b
    return nxt
