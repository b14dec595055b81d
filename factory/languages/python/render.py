"""Python text of the program tree (``factory.languages.nodes``): 4-space indents, one statement a line.

The tree's expression leaves are already Python text (filled templates), so a full CST (libcst) is
not needed to print a program: building one cost ~8 ms a program, 10× the whole budget of the
synthesize stage. The tier check parses the result independently (tree-sitter).
"""

from __future__ import annotations

from factory.languages import nodes as n
from factory.languages import text
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
    return text.expression(e, " and ", "({}, {})", binds_looser_than_and)


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
            out.append(pad + text.simple_statement(s, expression))
