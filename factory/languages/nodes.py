"""The language-neutral program tree: what the generator builds and a language renders.

The generator never writes program text itself. It builds these nodes; their expression leaves
are either structure (a name, an integer, a helper call, a conjunction...) or :class:`Code`, an
expression that a grammar template wrote (the grammar folder is written in its language, so a
filled template stays text). ``Language.render`` turns a :class:`Program` into source text,
one statement per line (docs/languages.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- expressions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """An expression written by the grammar's templates, in the language's own syntax; ``reads``
    and ``writes`` name the program's variables it reads and changes (the generator knows them:
    the text is never parsed)."""

    text: str
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Name:
    """A variable or parameter of the program."""

    id: str


@dataclass(frozen=True)
class Int:
    """An integer literal written by the generator (a loop counter's start or bound)."""

    value: int


@dataclass(frozen=True)
class LessThan:
    """``left < right``: a bounded loop's test."""

    left: Expr
    right: Expr


@dataclass(frozen=True)
class And:
    """The conjunction of conditions (the guards of one statement), in order."""

    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class Call:
    """A call of a function the program defines (the entry calling its helper)."""

    function: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Pair:
    """Two values returned together."""

    first: Expr
    second: Expr


Expr = Code | Name | Int | LessThan | And | Call | Pair


def reads_of(e: Expr) -> frozenset[str]:
    """The variables an expression node reads."""
    if isinstance(e, Code):
        return e.reads
    if isinstance(e, Name):
        return frozenset((e.id,))
    if isinstance(e, Int):
        return frozenset()
    if isinstance(e, LessThan):
        return reads_of(e.left) | reads_of(e.right)
    if isinstance(e, And):
        return frozenset().union(*(reads_of(o) for o in e.operands))
    if isinstance(e, Call):
        return frozenset().union(*(reads_of(a) for a in e.args))
    if isinstance(e, Pair):
        return reads_of(e.first) | reads_of(e.second)
    raise TypeError(e)  # pragma: no cover - the tree only holds the kinds above


# --- statements ----------------------------------------------------------------------------------


@dataclass
class Assign:
    """``target = value``: binds (or rebinds) a variable."""

    target: str
    value: Expr


@dataclass
class Increment:
    """Adds ``by`` to a counter variable (the last statement of a bounded ``While``)."""

    target: str
    by: int = 1


@dataclass
class ExprStatement:
    """An expression evaluated for its effect (a mutating call whose result is not kept)."""

    value: Expr


@dataclass
class TemplateStatement:
    """A whole statement written by a grammar template (an operation with ``statement: true``),
    with the variables it reads and writes."""

    code: str
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()


@dataclass
class Return:
    value: Expr


@dataclass
class If:
    """``if test: body``, then ``elif`` branches in order, then an optional ``else`` body."""

    test: Expr
    body: list[Stmt]
    elifs: list[tuple[Expr, list[Stmt]]] = field(default_factory=list)
    orelse: list[Stmt] | None = None


@dataclass
class ForEach:
    """Runs ``body`` once per element of ``iterable``, bound to ``target``."""

    target: str
    iterable: Expr
    body: list[Stmt]


@dataclass
class CountedLoop:
    """Runs ``body`` ``count`` times, ``target`` counting 0, 1, ..., ``count - 1``."""

    target: str
    count: int
    body: list[Stmt]


@dataclass
class While:
    """Runs ``body`` while ``test`` holds (the generator bounds it by a counter)."""

    test: Expr
    body: list[Stmt]


Stmt = Assign | Increment | ExprStatement | TemplateStatement | Return | If | ForEach | CountedLoop | While


@dataclass
class Function:
    name: str
    params: list[str]
    body: list[Stmt]


@dataclass
class Program:
    """The modules the operations need (``imports:`` of the grammar) and the functions, in order
    (a helper before the entry that calls it)."""

    imports: tuple[str, ...]
    functions: list[Function]
