"""Which statements of a generated function can reach its return value (backward liveness).

The generator builds programs so that every value it computes is read later (def-use by
construction, ``factory.synth.statements``); this is the independent check of that promise on
the finished tree. It reads the variables each node reads and writes from the tree itself
(``Code.reads``, ``ExprStatement.writes``...), so it is language-neutral. A mutation of a
variable counts as reading it and writing it; a loop's body is analysed to a fixed point.
"""

from __future__ import annotations

from factory.languages import nodes as n
from factory.languages.nodes import reads_of


def dead_statements(fn: n.Function) -> list[n.Stmt]:
    """The simple statements of ``fn`` whose effect no later statement or the return reads."""
    dead: list[n.Stmt] = []
    _block(fn.body, frozenset(), dead)
    return dead


def _simple(s: n.Stmt, live: frozenset[str], dead: list[n.Stmt]) -> frozenset[str]:
    """Live variables before ``s``, given those after it; ``s`` goes to ``dead`` if useless."""
    if isinstance(s, n.Return):
        return reads_of(s.value)
    if isinstance(s, n.Assign):
        writes, reads, kills = (
            frozenset((s.target,)) | _writes(s.value),
            reads_of(s.value),
            frozenset((s.target,)),
        )
    elif isinstance(s, n.Increment):
        writes = reads = frozenset((s.target,))
        kills = frozenset()
    elif isinstance(s, n.ExprStatement):
        writes, reads, kills = _writes(s.value), reads_of(s.value), frozenset()
    elif isinstance(s, n.TemplateStatement):
        writes, reads, kills = s.writes, s.reads, frozenset()
    else:  # pragma: no cover - compound statements are handled by _block
        raise TypeError(s)
    if not writes & live:
        dead.append(s)
        return live
    return (live - kills) | reads


def _writes(e: n.Expr) -> frozenset[str]:
    # ``x = xs.pop()`` writes ``xs`` too: it is needed while either is live.
    return e.writes if isinstance(e, n.Code) else frozenset()


def _block(stmts: list[n.Stmt], live: frozenset[str], dead: list[n.Stmt]) -> frozenset[str]:
    for s in reversed(stmts):
        live = _statement(s, live, dead)
    return live


def _statement(s: n.Stmt, live: frozenset[str], dead: list[n.Stmt]) -> frozenset[str]:
    if isinstance(s, n.If):
        branches = [s.body, *(body for _, body in s.elifs)]
        before = reads_of(s.test) | frozenset().union(*(reads_of(t) for t, _ in s.elifs))
        ins = [_block(body, live, dead) for body in branches]
        tail = _block(s.orelse, live, dead) if s.orelse is not None else live
        return before.union(*ins) | tail
    if isinstance(s, (n.ForEach, n.CountedLoop, n.While)):
        header = reads_of(s.iterable) if isinstance(s, n.ForEach) else frozenset()
        if isinstance(s, n.While):
            header = reads_of(s.test)
        bound = frozenset((s.target,)) if isinstance(s, (n.ForEach, n.CountedLoop)) else frozenset()
        out = live | header
        while True:  # the body's entry is live at its exit (the next iteration)
            scratch: list[n.Stmt] = []
            inside = _block(s.body, out, scratch)
            grown = out | (inside - bound) | header
            if grown == out:
                dead.extend(scratch)
                return (live | inside | header) - bound
            out = grown
    return _simple(s, live, dead)
