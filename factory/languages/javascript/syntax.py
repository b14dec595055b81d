"""How the tier check reads JavaScript: tree-sitter-javascript, its node kinds, and operation shapes.

Shapes, as the tier check counts them: ``("method", "push")`` (a call of a member), ``("call",
"Math.max")`` (a function of a global namespace, capitalised: ``Math``, ``Object``, ``Number``),
``("call", "parseInt")``, ``("prop", "length")`` (a member read that is not called), ``("binop",
"+")`` (every binary operator, ``===`` and ``&&`` included), ``("unary", "!")``, ``("ifexp",)``,
``("augassign", "+=")``, ``("update", "++")``, ``("setitem",)``, ``("index",)``, ``("new", "Set")``,
``("template",)`` (a template literal with substitutions), ``("spread",)``. Arrow functions are not
operations (the method that takes one is), and a literal ``new Set([1, 2])`` is a constant.
"""

from __future__ import annotations

import string
from functools import lru_cache

from tree_sitter import Node

from factory.languages.base import NodeKinds, Signature, TierSyntax
from factory.languages.javascript.values import literal_value, parser
from factory.languages.tree import ends_with_increment, field, text, walk

KINDS = NodeKinds(
    function="function_declaration",
    imports=frozenset(),
    compound=frozenset({"if_statement", "for_statement", "for_in_statement", "while_statement"}),
    block="statement_block",
    same_depth=frozenset({"else_clause"}),
    definitions=frozenset(
        {
            "function_declaration",
            "function_expression",
            "function",
            "class_declaration",
            "class",
            "generator_function_declaration",
            "generator_function",
            "method_definition",
        }
    ),  # fmt: skip
    while_loop="while_statement",
    call="call_expression",
    statement_suffix=("_statement", "_declaration"),
    statement_parents=frozenset({"statement_block", "program"}),
)


def parse(source: str) -> Node:
    return parser().parse(source.encode()).root_node


def _operator(node: Node) -> str:
    return text(field(node, "operator"))


def _is_constant(node: Node) -> bool:
    try:
        literal_value(text(node))
    except (ValueError, SyntaxError, TypeError):
        return False
    return True


def signatures(
    node: Node,
    local_functions: frozenset[str] = frozenset(),
    literals: frozenset[str] = frozenset(),
) -> list[Signature]:
    """Operation shapes in pre-order (module docstring); ``literals`` are texts that are constants
    although they parse as constructor calls (``new Set()``)."""
    found: list[Signature] = []
    stack = [node]
    while stack:
        n = stack.pop()
        kind = n.type
        children = list(reversed(n.children))
        if kind == "new_expression":
            if text(n) in literals or _is_constant(n):
                continue  # a constant: nothing under it is an operation
            found.append(("new", text(field(n, "constructor"))))
        elif kind == "call_expression":
            func = field(n, "function")
            if func.type == "member_expression":
                owner, name = field(func, "object"), text(field(func, "property"))
                if owner.type == "identifier" and text(owner)[:1].isupper():
                    found.append(("call", f"{text(owner)}.{name}"))
                else:
                    found.append(("method", name))
                children = [c for c in children if c.id != func.id] + [owner]  # not a ("prop", ...)
            elif func.type == "identifier" and text(func) not in local_functions:
                found.append(("call", text(func)))
        elif kind == "member_expression":
            found.append(("prop", text(field(n, "property"))))
        elif kind == "binary_expression":
            found.append(("binop", _operator(n)))
        elif kind == "unary_expression":
            if field(n, "argument").type != "number":  # -7 is a constant
                found.append(("unary", _operator(n)))
        elif kind == "ternary_expression":
            found.append(("ifexp",))
        elif kind == "augmented_assignment_expression":
            found.append(("augassign", _operator(n)))
        elif kind == "update_expression":
            found.append(("update", _operator(n)))
        elif kind == "assignment_expression" and field(n, "left").type == "subscript_expression":
            found.append(("setitem",))
            left = field(n, "left")
            children = [c for c in children if c.id != left.id] + list(reversed(left.children))
        elif kind == "subscript_expression":
            found.append(("index",))
        elif kind == "template_string" and any(c.type == "template_substitution" for c in n.children):
            found.append(("template",))
        elif kind == "spread_element":
            found.append(("spread",))
        stack.extend(children)
    return found


def _probe(template: str) -> str:
    """A template with each placeholder replaced by a name (``{recv}`` → ``_recv``)."""
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    return template.format(**{f: f"_{f}" for f in fields})


# Wrappers keyed by what they wrap: ``[...{recv}.keys()]``, ``Array.from(...)``, ``String(...)``.
_WRAPPERS = frozenset({"Array.from", "String", "Number", "Boolean"})


@lru_cache(maxsize=4096)
def template_signatures(template: str, statement: bool) -> tuple[Signature, frozenset[Signature]]:
    """(key signature, all signatures) of an operation template: the key is the outermost
    operation, except that a spread into an array or a conversion (``Array.from``) is keyed by
    what it wraps."""
    root = parse(_probe(template))
    node = root.children[0]
    while True:
        if node.type in ("expression_statement", "parenthesized_expression") and node.named_children:
            node = node.named_children[0]
        elif _spread_of_operation(node):
            node = node.named_children[0].named_children[0]
        elif node.type == "call_expression" and _wrapper(node):
            node = field(node, "arguments").named_children[0]
        else:
            break
    key = signatures(node)[0]
    return key, frozenset(signatures(root))


def _spread_of_operation(node: Node) -> bool:
    """``[...x.keys()]``: an array of one spread whose argument is itself an operation."""
    inner = node.named_children
    return (
        node.type == "array"
        and len(inner) == 1
        and inner[0].type == "spread_element"
        and bool(signatures(inner[0].named_children[0]))
    )


def _wrapper(call: Node) -> bool:
    """``Array.from(x)``, ``String(x)``: one argument that is itself an operation."""
    args = field(call, "arguments").named_children
    name = text(field(call, "function"))
    return name in _WRAPPERS and len(args) == 1 and bool(signatures(args[0]))


def _assigned_names(nodes: list[Node]) -> set[str]:
    names: set[str] = set()
    for top in nodes:
        for n in walk(top):
            if n.type in ("assignment_expression", "augmented_assignment_expression"):
                target = field(n, "left")
                if target.type == "identifier":
                    names.add(text(target))
            elif n.type == "update_expression":
                target = field(n, "argument")
                if target.type == "identifier":
                    names.add(text(target))
    return names


def while_bounded(loop: Node) -> bool:
    """``while (c < N) {`` whose body ends with ``c += <positive int>;``, never assigns ``c`` or N
    elsewhere and has no ``continue`` (which would skip the increment); N a number or a name."""
    test = field(loop, "condition")
    while test.type == "parenthesized_expression" and test.named_children:
        test = test.named_children[0]
    if test.type != "binary_expression" or _operator(test) != "<":
        return False
    counter, bound = field(test, "left"), field(test, "right")
    if counter.type != "identifier" or bound.type not in ("number", "identifier"):
        return False
    body = field(loop, "body").named_children

    def increments(last: Node) -> bool:
        return (
            last.type == "augmented_assignment_expression"
            and text(field(last, "left")) == text(counter)
            and _operator(last) == "+="
            and field(last, "right").type == "number"
            and text(field(last, "right")).isdigit()
            and int(text(field(last, "right"))) >= 1
        )

    return ends_with_increment(body, counter, bound, increments, _assigned_names)


class JavaScriptTierSyntax(TierSyntax):
    """The tier check's view of JavaScript (tree-sitter-javascript): this module's functions."""

    kinds = KINDS
    # for (let i = 0; i < n; i++): a comparison and an increment.
    counted_loop_shapes = frozenset({("binop", "<"), ("update", "++")})
    parse = staticmethod(parse)
    signatures = staticmethod(signatures)
    template_signatures = staticmethod(template_signatures)
    while_bounded = staticmethod(while_bounded)
