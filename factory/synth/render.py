"""A minimal statement tree for generated programs and its renderer (one statement per line).

Generated programs are built from already-rendered expression text, so a full CST (libcst) is
not needed to print them; building one cost ~8 ms a program, 10× the whole budget of the
synthesize stage. The static check parses the result independently (tree-sitter).
"""

from __future__ import annotations

from dataclasses import dataclass, field

INDENT = "    "


@dataclass
class If:
    test: str
    body: list[Stmt]
    elifs: list[tuple[str, list[Stmt]]] = field(default_factory=list)
    orelse: list[Stmt] | None = None


@dataclass
class For:
    target: str
    iter: str
    body: list[Stmt]


@dataclass
class While:
    test: str
    body: list[Stmt]


@dataclass
class Function:
    name: str
    params: list[str]
    body: list[Stmt]


Stmt = str | If | For | While


def _block(stmts: list[Stmt], depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for s in stmts:
        if isinstance(s, str):
            out.append(pad + s)
        elif isinstance(s, If):
            out.append(f"{pad}if {s.test}:")
            _block(s.body, depth + 1, out)
            for test, body in s.elifs:
                out.append(f"{pad}elif {test}:")
                _block(body, depth + 1, out)
            if s.orelse is not None:
                out.append(f"{pad}else:")
                _block(s.orelse, depth + 1, out)
        elif isinstance(s, For):
            out.append(f"{pad}for {s.target} in {s.iter}:")
            _block(s.body, depth + 1, out)
        elif isinstance(s, While):
            out.append(f"{pad}while {s.test}:")
            _block(s.body, depth + 1, out)
        else:  # pragma: no cover - the tree only holds the kinds above
            raise TypeError(s)


def render(functions: list[Function], imports: list[str] | tuple[str, ...] = ()) -> str:
    """Python source: ``import`` lines (sorted), then the functions, 4-space indents, one
    statement per line."""
    out: list[str] = [f"import {module}" for module in sorted(set(imports))]
    for fn in functions:
        out.append(f"def {fn.name}({', '.join(fn.params)}):")
        _block(fn.body, 1, out)
    return "\n".join(out) + "\n"
