"""JavaScript text of the program tree (``factory.languages.nodes``): 2-space indents, one statement a
line, semicolons, braces on the header's line, ``let``/``const`` declarations (docs/languages.md §6.4).

A variable is declared in the innermost block that holds every statement naming it, so every read
is in scope and a block's own variables end with it (the tracer forgets them there, §6.3). When
its first statement there is a plain assignment, that assignment declares it (``const`` if nothing
rebinds it later, else ``let``); otherwise ``let x;`` goes just before that statement (a variable
first assigned in an ``if`` and read after it). Which names a statement holds comes from the
tree: ``Code.reads``/``writes`` and the names of the structure nodes.
"""

from __future__ import annotations

from factory.languages import nodes as n
from factory.languages import text
from factory.languages.javascript.code import binds_looser_than_and

INDENT = "  "
#: Statement templates that rebind their receiver start with it and one of these (``xs += ys``).
_REBINDING = ("=", "+=", "-=", "*=", "/=", "%=", "**=", "++", "--", "||=", "&&=", "??=", "<<=", ">>=")


def render(program: n.Program) -> str:
    """The functions, one ``function`` declaration each (JavaScript needs no imports: ``Math``,
    ``Object`` and the rest are globals; a grammar's ``imports:`` write nothing)."""
    out: list[str] = []
    for fn in program.functions:
        out.append(f"function {fn.name}({', '.join(fn.params)}) {{")
        _block(fn.body, 1, set(fn.params), out)
        out.append("}")
    return "\n".join(out) + "\n"


def expression(e: n.Expr) -> str:
    """The JavaScript text of an expression node (a ``Pair`` is a two-element array)."""
    return text.expression(e, " && ", "[{}, {}]", binds_looser_than_and)


def _expr_names(e: n.Expr) -> frozenset[str]:
    """The variables an expression node names (reads, and changes: ``xs.pop()``)."""
    return n.reads_of(e) | e.writes if isinstance(e, n.Code) else n.reads_of(e)


def names(s: n.Stmt) -> set[str]:
    """Every variable a statement names, nested statements included (a loop's own variable too)."""
    found: set[str] = set()
    if isinstance(s, n.Assign):
        found.add(s.target)
        found.update(_expr_names(s.value))
    elif isinstance(s, n.Increment):
        found.add(s.target)
    elif isinstance(s, (n.ExprStatement, n.Return)):
        found.update(_expr_names(s.value))
    elif isinstance(s, n.TemplateStatement):
        found.update(s.reads | s.writes)
    else:
        for body in _bodies(s):
            for inner in body:
                found |= names(inner)
        if isinstance(s, n.If):
            found.update(_expr_names(s.test))
            for test, _ in s.elifs:
                found.update(_expr_names(test))
        elif isinstance(s, n.ForEach):
            found.add(s.target)
            found.update(_expr_names(s.iterable))
        elif isinstance(s, n.CountedLoop):
            found.add(s.target)
        elif isinstance(s, n.While):
            found.update(_expr_names(s.test))
    return found


def _bodies(s: n.Stmt) -> list[list[n.Stmt]]:
    """The blocks a compound statement holds."""
    if isinstance(s, n.If):
        return [s.body, *(body for _, body in s.elifs), *([s.orelse] if s.orelse is not None else [])]
    if isinstance(s, (n.ForEach, n.CountedLoop, n.While)):
        return [s.body]
    return []


def _rebinds(s: n.Stmt, name: str) -> bool:
    """Whether ``s`` (or a statement in it) assigns ``name`` anew."""
    if isinstance(s, n.Assign):
        return s.target == name
    if isinstance(s, n.Increment):
        return s.target == name
    if isinstance(s, n.TemplateStatement):
        rest = s.code[len(name) :].lstrip() if s.code.startswith(name) else ""
        return name in s.writes and rest.startswith(_REBINDING) and not rest.startswith("==")
    return any(_rebinds(inner, name) for body in _bodies(s) for inner in body)


def _header_names(s: n.Stmt) -> set[str]:
    """The variables a compound statement's header names (its tests, what it iterates, its own
    loop variable)."""
    if isinstance(s, n.If):
        return {*_expr_names(s.test), *(v for test, _ in s.elifs for v in _expr_names(test))}
    if isinstance(s, n.ForEach):
        return {s.target, *_expr_names(s.iterable)}
    if isinstance(s, n.CountedLoop):
        return {s.target}
    if isinstance(s, n.While):
        return set(_expr_names(s.test))
    return set()


def _owned(stmts: list[n.Stmt], declared: set[str]) -> dict[str, int]:
    """The variables this block declares, each at the index of the first statement naming it: those
    it names that are not declared outside it, except a variable that only one block nested in one
    statement names (that block declares it) and a loop's own variable (its header does)."""
    per_statement = [names(s) for s in stmts]
    owned: dict[str, int] = {}
    for i, found in enumerate(per_statement):
        for name in sorted(found - declared - set(owned)):
            s = stmts[i]
            if isinstance(s, (n.ForEach, n.CountedLoop)) and s.target == name:
                continue
            only_here = not any(name in later for later in per_statement[i + 1 :])
            nested = [body for body in _bodies(s) if any(name in names(t) for t in body)]
            if only_here and len(nested) == 1 and name not in _header_names(s):
                continue
            owned[name] = i
    return owned


def _block(stmts: list[n.Stmt], depth: int, declared: set[str], out: list[str]) -> None:
    pad = INDENT * depth
    owned = _owned(stmts, declared)
    inside = declared | set(owned)
    for i, s in enumerate(stmts):
        keyword = ""
        for name in sorted(v for v, at in owned.items() if at == i):
            if isinstance(s, n.Assign) and s.target == name and name not in set(_expr_names(s.value)):
                again = any(_rebinds(t, name) for t in stmts[i + 1 :])
                keyword = "let " if again else "const "
            else:
                out.append(f"{pad}let {name};")
        if isinstance(s, n.If):
            out.append(f"{pad}if ({expression(s.test)}) {{")
            _block(s.body, depth + 1, inside, out)
            for test, body in s.elifs:
                out.append(f"{pad}}} else if ({expression(test)}) {{")
                _block(body, depth + 1, inside, out)
            if s.orelse is not None:
                out.append(f"{pad}}} else {{")
                _block(s.orelse, depth + 1, inside, out)
            out.append(f"{pad}}}")
        elif isinstance(s, n.ForEach):
            out.append(f"{pad}for (const {s.target} of {expression(s.iterable)}) {{")
            _block(s.body, depth + 1, inside | {s.target}, out)
            out.append(f"{pad}}}")
        elif isinstance(s, n.CountedLoop):
            out.append(f"{pad}for (let {s.target} = 0; {s.target} < {s.count}; {s.target}++) {{")
            _block(s.body, depth + 1, inside | {s.target}, out)
            out.append(f"{pad}}}")
        elif isinstance(s, n.While):
            out.append(f"{pad}while ({expression(s.test)}) {{")
            _block(s.body, depth + 1, inside, out)
            out.append(f"{pad}}}")
        else:
            out.append(f"{pad}{keyword}{text.simple_statement(s, expression)};")
