"""Python text of the program tree (``factory.languages.nodes``): 4-space indents, one statement a line.

The tree's expression leaves are already Python text (filled templates), so a full CST (libcst) is
not needed to print a program: building one cost ~8 ms a program, 10× the whole budget of the
synthesize stage. The tier check parses the result independently (tree-sitter).
"""

from __future__ import annotations

from factory.languages import nodes as n
from factory.languages.python.code import binds_looser_than_and

INDENT = "    "


def render(program: n.Program) -> str:
    """``import`` lines (sorted), then the functions."""
    out: list[str] = [f"import {module}" for module in sorted(set(program.imports))]
    for fn in program.functions:
        out.append(f"def {fn.name}({', '.join(fn.params)}):")
        _block(fn.body, 1, out)
    return "\n".join(out) + "\n"


def expression(e: n.Expr) -> str:
    """The Python text of an expression node."""
    if isinstance(e, n.Code):
        return e.text
    if isinstance(e, n.Name):
        return e.id
    if isinstance(e, n.Int):
        return str(e.value)
    if isinstance(e, n.LessThan):
        return f"{expression(e.left)} < {expression(e.right)}"
    if isinstance(e, n.And):
        if len(e.operands) == 1:
            return expression(e.operands[0])
        return " and ".join(_operand(o) for o in e.operands)
    if isinstance(e, n.Call):
        return f"{e.function}({', '.join(expression(a) for a in e.args)})"
    if isinstance(e, n.Pair):
        return f"({expression(e.first)}, {expression(e.second)})"
    raise TypeError(e)  # pragma: no cover - the tree only holds the kinds above


def _operand(e: n.Expr) -> str:
    text = expression(e)
    return f"({text})" if isinstance(e, n.Code) and binds_looser_than_and(text) else text


def _statement(s: n.Stmt) -> str:
    if isinstance(s, n.Assign):
        return f"{s.target} = {expression(s.value)}"
    if isinstance(s, n.Increment):
        return f"{s.target} += {s.by}"
    if isinstance(s, n.ExprStatement):
        return expression(s.value)
    if isinstance(s, n.TemplateStatement):
        return s.code
    if isinstance(s, n.Return):
        return f"return {expression(s.value)}"
    raise TypeError(s)  # pragma: no cover - compound statements are written by _block


def _block(stmts: list[n.Stmt], depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for s in stmts:
        if isinstance(s, n.If):
            out.append(f"{pad}if {expression(s.test)}:")
            _block(s.body, depth + 1, out)
            for test, body in s.elifs:
                out.append(f"{pad}elif {expression(test)}:")
                _block(body, depth + 1, out)
            if s.orelse is not None:
                out.append(f"{pad}else:")
                _block(s.orelse, depth + 1, out)
        elif isinstance(s, n.ForEach):
            out.append(f"{pad}for {s.target} in {expression(s.iterable)}:")
            _block(s.body, depth + 1, out)
        elif isinstance(s, n.CountedLoop):
            out.append(f"{pad}for {s.target} in range({s.count}):")
            _block(s.body, depth + 1, out)
        elif isinstance(s, n.While):
            out.append(f"{pad}while {expression(s.test)}:")
            _block(s.body, depth + 1, out)
        else:
            out.append(pad + _statement(s))
