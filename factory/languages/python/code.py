"""Python expression text: filling templates (precedence), and what the generator asks of an expression."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Mapping
from functools import lru_cache

from factory.languages import text


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
    return text.fill(template, values, _needs_parens, is_atomic)


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


NAME_PATTERN = re.compile(r"[a-z]+(_[a-z]+)*")  # snake_case words, no digits


def name_error(name: str) -> str | None:
    """Why ``name`` may not be a variable of a Python program: not snake_case letters, a keyword
    or a builtin."""
    if not NAME_PATTERN.fullmatch(name):
        return "is not a snake_case name of letters (no digits)"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "is a keyword"
    if hasattr(builtins, name):
        return "is a builtin"
    return None


def normalized_source(source: str) -> str:
    """``ast.unparse`` of the source: formatting and comments gone (SyntaxError when it does not parse)."""
    return ast.unparse(ast.parse(source))
