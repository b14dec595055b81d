"""Python expression text: filling templates (precedence), and what the generator asks of an expression."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import lru_cache


def template_error(text: str, *, statement: bool) -> str | None:
    """Why ``text`` does not parse as a Python expression (statement); None when it does."""
    try:
        ast.parse(text, mode="exec" if statement else "eval")
    except SyntaxError as exc:
        return exc.msg
    except ValueError as exc:  # a null byte
        return str(exc)
    return None


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every ``{placeholder}`` replaced by its expression text."""
    return template.format(**{name: _filled(template, name, code) for name, code in values.items()})


def _filled(template: str, placeholder: str, code: str) -> str:
    """The text of ``code`` for ``{placeholder}``, parenthesised where precedence needs it."""
    if _needs_parens(template, placeholder) and not is_atomic(code):  # the cheap (memoised) test first
        return f"({code})"
    if code[:1].isdigit() and _before_dot(template, placeholder):
        return f"({code})"  # 7.bit_length() is a syntax error
    return code


@lru_cache(maxsize=4096)
def _before_dot(template: str, placeholder: str) -> bool:
    """Whether ``{placeholder}`` is followed by a ``.`` in ``template`` (memoised, as below)."""
    return template.partition("{" + placeholder + "}")[2].startswith(".")


@lru_cache(maxsize=4096)  # per (template, placeholder): saves re-reading the template per fill
def _needs_parens(template: str, placeholder: str) -> bool:
    """Whether a non-atomic expression put into ``{placeholder}`` needs parentheses."""
    marker = "{" + placeholder + "}"
    before, _, after = template.partition(marker)
    left, right = before.rstrip(), after.lstrip()
    if not left and not right:
        return False
    return not (left.endswith(("(", "[", ",", ":")) and right.startswith((")", "]", ",", ":")))


_ATOMIC = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Dict, ast.Set, ast.Tuple)


@lru_cache(maxsize=16384)
def is_atomic(code: str) -> bool:
    """Whether an expression binds tighter than any operator (a name, a call, a display...)."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Constant):
        return not (isinstance(node.value, (int, float)) and node.value < 0)
    return isinstance(node, _ATOMIC)


def is_signed_number(code: str) -> bool:
    """Whether ``code`` is a number literal with a sign, such as ``-7`` or ``+2.5``."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float, complex)
    )


def constant_condition(code: str) -> bool:
    """Conditions the generator rejects: a comparison of an expression with itself (``x != x``),
    a boolean combination, or another test that reads no variable (``'a'.isdigit()``)."""
    node = ast.parse(code, mode="eval").body
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return ast.dump(node.left) == ast.dump(node.comparators[0])
    return isinstance(node, ast.BoolOp) or not any(isinstance(n, ast.Name) for n in ast.walk(node))


_BELOW_AND = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)  # BoolOp: an `or` (an `and` is safe)


@lru_cache(maxsize=4096)
def binds_looser_than_and(code: str) -> bool:
    """Whether ``code`` would change meaning as an operand of ``and`` (an ``or``, a conditional
    expression, a lambda, an assignment expression)."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return True
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return False
    return isinstance(node, _BELOW_AND)
