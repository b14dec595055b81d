"""What every language's text of a program shares: filling a template's placeholders with
parentheses where precedence needs them, the text of the generator's own expression nodes, and
how many lines a program has.
A language gives the parts that differ (which expressions are atomic, where a placeholder needs
parentheses, how ``And`` and ``Pair`` are written)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from factory.languages import nodes as n


def fill(
    template: str,
    values: Mapping[str, str],
    needs_parens: Callable[[str, str], bool],
    is_atomic: Callable[[str], bool],
) -> str:
    """``template`` with every ``{placeholder}`` replaced by its expression text, in parentheses
    where ``needs_parens(template, placeholder)`` and the text is not atomic, or where a number
    would be followed by a ``.`` (``7.bit_length()``, ``7.toFixed()`` are syntax errors)."""

    def filled(placeholder: str, code: str) -> str:
        if needs_parens(template, placeholder) and not is_atomic(code):  # the cheap (memoised) test first
            return f"({code})"
        if code[:1].isdigit() and _before_dot(template, placeholder):
            return f"({code})"
        return code

    return template.format(**{name: filled(name, code) for name, code in values.items()})


@lru_cache(maxsize=4096)
def _before_dot(template: str, placeholder: str) -> bool:
    """Whether ``{placeholder}`` is followed by a ``.`` in ``template`` (memoised per pair)."""
    return template.partition("{" + placeholder + "}")[2].startswith(".")


def expression(e: n.Expr, conjunction: str, pair: str, looser_than_and: Callable[[str], bool]) -> str:
    """The text of an expression node: ``conjunction`` joins an ``And`` (`` and ``), ``pair`` is
    the format of a ``Pair`` (``"({}, {})"``), and an operand of the conjunction that a template
    wrote goes in parentheses when ``looser_than_and`` says it binds looser."""
    if isinstance(e, n.Code):
        return e.text
    if isinstance(e, n.Name):
        return e.id
    if isinstance(e, n.Int):
        return str(e.value)
    parts = lambda x: expression(x, conjunction, pair, looser_than_and)  # noqa: E731
    if isinstance(e, n.LessThan):
        return f"{parts(e.left)} < {parts(e.right)}"
    if isinstance(e, n.And):
        if len(e.operands) == 1:
            return parts(e.operands[0])
        texts = [parts(o) for o in e.operands]
        return conjunction.join(
            f"({t})" if isinstance(o, n.Code) and looser_than_and(t) else t
            for o, t in zip(e.operands, texts, strict=True)
        )
    if isinstance(e, n.Call):
        return f"{e.function}({', '.join(parts(a) for a in e.args)})"
    if isinstance(e, n.Pair):
        return pair.format(parts(e.first), parts(e.second))
    raise TypeError(e)  # pragma: no cover - the tree only holds the kinds above


def simple_statement(s: n.Stmt, expression: Callable[[n.Expr], str]) -> str:
    """The text of a statement that is not compound (no terminator): ``x = ...``, ``x += 1``, an
    expression, a template's statement, ``return ...``."""
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
    raise TypeError(s)  # pragma: no cover - compound statements are written by the block writer


def line_count(source: str) -> int:
    """The lines of a program's source, less the blank lines at its end (an item's ``n_lines``)."""
    lines = source.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return len(lines)
