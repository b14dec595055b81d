"""JavaScript expression text: checking and filling templates (precedence), and what the generator
asks of an expression. Everything parses with tree-sitter-javascript (``values.parser``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache

from tree_sitter import Node

from factory.languages.javascript.values import expression, parser
from factory.languages.text import fill as fill_template
from factory.languages.tree import text, walk

# Expressions that bind tighter than any operator: a placeholder filled with one needs no parentheses.
_ATOMIC = frozenset({
    "identifier", "call_expression", "member_expression", "subscript_expression", "array", "object",
    "string", "template_string", "true", "false", "null", "undefined", "new_expression", "this", "number",
})  # fmt: skip
# The placeholder is a whole operand when it sits between these (an argument, an element, a
# template literal's substitution). After a spread or an arrow a ternary could stand bare, but
# reads better in parentheses.
_OPEN = ("(", "[", ",", "${{")
_CLOSE = (")", "]", ",", "}}")
# An assignment operator (``=``, ``+=``, ``??=``...) but no comparison (``===``, ``<=``, ``!=``).
_ASSIGNED = re.compile(r"(?:[^=!<>]|\*\*|\?\?|&&|\|\||<<|>>)=$")
# Looser than ``&&`` or not to be mixed with it without parentheses (``a ?? b && c`` is an error).
_LOOSER_THAN_AND = frozenset({"||", "??"})
_BELOW_AND = frozenset({
    "ternary_expression", "arrow_function", "assignment_expression", "augmented_assignment_expression",
    "sequence_expression", "yield_expression",
})  # fmt: skip
#: Global names a condition may read without reading a variable (``Math``, ``parseInt``).
GLOBALS = frozenset({"undefined", "NaN", "Infinity", "parseInt", "parseFloat", "isNaN", "isFinite"})
#: An identifier of ASCII letters, digits, ``_`` and ``$`` (the Unicode ones JavaScript also allows
#: are left out: no program here writes them).
IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
#: The reserved words of the language (strict mode), which no function may be named.
KEYWORDS = frozenset("""
    break case catch class const continue debugger default delete do else enum export extends false
    finally for function if import in instanceof new null return super switch this throw true try
    typeof var void while with yield let static implements interface package private protected public
    await arguments eval
""".split())  # fmt: skip
#: The reserved words, the contextual keywords and the globals: names a program must not bind.
RESERVED = KEYWORDS | {"async", "of", "get", "set"} | GLOBALS
NAME_PATTERN = re.compile(r"[a-z]{2,}([A-Z][a-z]+)*")  # camelCase words, two letters at least


def template_error(source: str, *, statement: bool) -> str | None:
    """Why ``source`` does not parse as a JavaScript expression (statements); None when it does."""
    if not statement:
        try:
            node = expression(source)
        except SyntaxError:
            return "not one expression"
        except ValueError:
            node = None
        return (
            "a sequence expression, not one expression"
            if node is None or node.type == "sequence_expression"
            else None
        )
    root = parser().parse(source.encode()).root_node
    bad = next((n for n in walk(root) if n.is_error or n.is_missing), None)
    if bad is None:
        return None
    what = f"missing {bad.type!r}" if bad.is_missing else "syntax error"
    return f"{what} at column {bad.start_point[1] + 1}"


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every ``{placeholder}`` replaced by its expression text."""
    return fill_template(template, values, _needs_parens, is_atomic)


@lru_cache(maxsize=4096)
def _needs_parens(template: str, placeholder: str) -> bool:
    """Whether a non-atomic expression put into ``{placeholder}`` needs parentheses."""
    before, _, after = template.partition("{" + placeholder + "}")
    left, right = before.rstrip(), after.lstrip()
    if not right and (not left or _ASSIGNED.search(left)):
        return False  # the whole template, or the value of an assignment
    return not (left.endswith(_OPEN) and right.startswith(_CLOSE))


def _node(code: str) -> Node | None:
    """The expression node of ``code``, None when it is not one expression."""
    try:
        return expression(code)
    except (SyntaxError, ValueError):
        return None


@lru_cache(maxsize=16384)
def is_atomic(code: str) -> bool:
    """Whether an expression binds tighter than any operator (a name, a call, an array...)."""
    node = _node(code)
    if node is None:
        return False
    return node.type in _ATOMIC  # a negative number is a unary expression: not atomic


def is_signed_number(code: str) -> bool:
    """Whether ``code`` is a number literal with a sign, such as ``-7`` or ``+2.5``."""
    node = _node(code)
    return (
        node is not None
        and node.type == "unary_expression"
        and text(node.child_by_field_name("operator") or node) in ("-", "+")
        and (node.child_by_field_name("argument") or node).type == "number"
    )


def variables(node: Node) -> Iterator[str]:
    """The names an expression reads that are neither an arrow function's parameters nor
    JavaScript's globals (``Math``, ``Object``, ``parseInt``: capitalised names are never variables)."""
    bound: set[str] = set()
    for n in walk(node):
        if n.type == "arrow_function":
            params = n.child_by_field_name("parameters") or n.child_by_field_name("parameter")
            if params is not None:
                bound.update(text(p) for p in walk(params) if p.type == "identifier")
        elif n.type == "identifier":
            name = text(n)
            if name not in bound and name not in GLOBALS and not name[:1].isupper():
                yield name


_COMPARISONS = frozenset({"===", "!==", "==", "!=", "<", "<=", ">", ">="})


def constant_condition(code: str) -> bool:
    """Conditions the generator rejects: a comparison of an expression with itself (``x === x``),
    a boolean combination (``&&``, ``||``), or a test that reads no variable (``"a".includes("b")``)."""
    node = _node(code)
    if node is None:
        return True
    if node.type == "binary_expression":
        operator = text(node.child_by_field_name("operator") or node)
        if operator in ("&&", "||", "??"):
            return True
        if operator in _COMPARISONS:
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and text(left) == text(right):
                return True
    return next(variables(node), None) is None


@lru_cache(maxsize=4096)
def binds_looser_than_and(code: str) -> bool:
    """Whether ``code`` needs parentheses as an operand of ``&&`` (an ``||``, a ``??``, a
    conditional expression, an arrow function, an assignment)."""
    node = _node(code)
    if node is None:
        return True
    if node.type == "binary_expression":
        return text(node.child_by_field_name("operator") or node) in _LOOSER_THAN_AND
    return node.type in _BELOW_AND


def normalized_source(source: str) -> str:
    """The program's tokens (tree-sitter leaves, comments dropped) joined by single spaces: the same
    text whatever the formatting. A program that does not parse keys on its own text's hash."""
    root = parser().parse(source.encode()).root_node
    if root.has_error:
        return "unparsed " + hashlib.sha256(source.encode()).hexdigest()
    return " ".join(text(n) for n in walk(root) if n.child_count == 0 and n.type != "comment")


def is_function_name(name: str) -> bool:
    """Whether ``name`` can name a function in strict-mode JavaScript."""
    return IDENTIFIER.fullmatch(name) is not None and name not in KEYWORDS


def name_error(name: str) -> str | None:
    """Why ``name`` may not be a variable name of a program: camelCase words of letters, two at
    least (the grammar's arrow functions bind one-letter parameters), never a reserved word."""
    if not NAME_PATTERN.fullmatch(name):
        return "is not a camelCase name of letters (two or more, no digits)"
    if name in RESERVED:
        return "is a reserved word or a global"
    return None
