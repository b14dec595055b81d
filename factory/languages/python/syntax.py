"""How the tier check reads Python: tree-sitter-python, its node kinds, and operation shapes.

Operations are recognised by the *shape* of their templates (a method call named ``pop``, a ``+``
operator, a ``[i:]`` slice...), so no operation is special-cased. tree-sitter parses in
microseconds; libcst took ~10 ms a program, more than the synthesize stage's budget.
"""

from __future__ import annotations

from functools import lru_cache

import tree_sitter_python
from tree_sitter import Language as TreeSitterLanguage
from tree_sitter import Node, Parser

from factory.languages.base import NodeKinds, Signature, TierSyntax
from factory.languages.tree import ends_with_increment, field, text, walk

_PARSER = Parser(TreeSitterLanguage(tree_sitter_python.language()))
_NUMBERS = {"integer", "float"}

KINDS = NodeKinds(
    function="function_definition",
    imports=frozenset({"import_statement"}),
    compound=frozenset({"if_statement", "for_statement", "while_statement"}),
    block="block",
    same_depth=frozenset({"elif_clause", "else_clause"}),
    definitions=frozenset({"function_definition", "class_definition", "lambda"}),
    while_loop="while_statement",
    call="call",
    statement_suffix="_statement",
    statement_parents=frozenset({"block", "module"}),
)


def parse(source: str) -> Node:
    return _PARSER.parse(source.encode()).root_node


def signatures(
    node: Node,
    local_functions: frozenset[str] = frozenset(),
    literals: frozenset[str] = frozenset(),
) -> list[Signature]:
    """Operation shapes in pre-order: ("method", name), ("call", name), ("binop", "+"), ....

    ``literals`` are texts that are constants even though they parse as calls (``set()``).
    """
    found: list[Signature] = []
    skip: set[int] = set()
    for n in walk(node):
        kind = n.type
        if kind == "call" and text(n) in literals:
            continue
        if kind == "call":
            func = field(n, "function")
            if func.type == "attribute":
                found.append(("method", text(field(func, "attribute"))))
            elif func.type == "identifier" and text(func) not in local_functions:
                found.append(("call", text(func)))
        elif kind == "binary_operator":
            found.append(("binop", text(field(n, "operator"))))
        elif kind == "unary_operator":
            # A negative number is a literal, not an operation.
            if field(n, "argument").type not in _NUMBERS:
                found.append(("unary", text(field(n, "operator"))))
        elif kind == "not_operator":
            found.append(("unary", "not"))
        elif kind == "boolean_operator":
            found.append(("boolop", text(field(n, "operator"))))
        elif kind == "conditional_expression":
            found.append(("ifexp",))
        elif kind == "comparison_operator":
            found.extend(("cmp", " ".join(text(op).split())) for op in n.children_by_field_name("operators"))
        elif kind == "augmented_assignment":
            found.append(("augassign", text(field(n, "operator"))))
        elif kind == "assignment" and field(n, "left").type == "subscript":
            found.append(("setitem",))
            skip.add(field(n, "left").id)
        elif kind == "subscript" and n.id not in skip:
            slices = n.children_by_field_name("subscript")
            if len(slices) == 1 and slices[0].type == "slice":
                found.append(("slice", *_slice_parts(slices[0])))
            else:
                found.append(("index",))
    return found


def _slice_parts(node: Node) -> tuple[bool, bool, bool]:
    """Which of lower, upper, step a slice has (``[i:]`` → (True, False, False))."""
    parts: list[list[Node]] = [[]]
    for child in node.children:
        if child.type == ":":
            parts.append([])
        else:
            parts[-1].append(child)
    parts += [[]] * (3 - len(parts))
    return bool(parts[0]), bool(parts[1]), bool(parts[2])


@lru_cache(maxsize=4096)
def template_signatures(template: str, statement: bool) -> tuple[Signature, frozenset[Signature]]:
    """(key signature, all signatures) of an operation template.

    The key is the outermost operation, except that a plain call wrapping another operation
    (``list(enumerate(x))``) is keyed by what it wraps.
    """
    probe = template.replace("{", "_").replace("}", "_")
    root = parse(probe)
    node = root.children[0]
    while node.type in ("expression_statement", "parenthesized_expression") and node.named_children:
        node = node.named_children[0]
    while node.type == "call" and field(node, "function").type == "identifier":
        args = field(node, "arguments").named_children
        if len(args) != 1 or args[0].type not in ("call", "binary_operator", "subscript"):
            break
        node = args[0]
    key = signatures(node)[0]
    return key, frozenset(signatures(root))


def _assigned_names(nodes: list[Node]) -> set[str]:
    names: set[str] = set()
    for top in nodes:
        for n in walk(top):
            if n.type in ("assignment", "augmented_assignment", "for_statement"):
                target = n.child_by_field_name("left")
                if target is not None and target.type == "identifier":
                    names.add(text(target))
    return names


def while_bounded(loop: Node) -> bool:
    """``while c < N:`` whose body ends with ``c += <positive int>``, never assigns ``c`` or N
    elsewhere and has no ``continue`` (which would skip the increment); N a literal or a name."""
    test = field(loop, "condition")
    if test.type != "comparison_operator" or [text(o) for o in test.children_by_field_name("operators")] != [
        "<"
    ]:
        return False
    counter, bound = test.named_children
    if counter.type != "identifier" or bound.type not in ("integer", "identifier"):
        return False
    body = field(loop, "body").named_children

    def increments(last: Node) -> bool:
        return (
            last.type == "augmented_assignment"
            and text(field(last, "left")) == text(counter)
            and text(field(last, "operator")) == "+="
            and field(last, "right").type == "integer"
            and int(text(field(last, "right"))) >= 1
        )

    return ends_with_increment(body, counter, bound, increments, _assigned_names)


class PythonTierSyntax(TierSyntax):
    """The tier check's view of Python (tree-sitter-python)."""

    kinds = KINDS
    counted_loop_shapes = frozenset({("call", "range")})  # for i in range(n)

    def parse(self, source: str) -> Node:
        return parse(source)

    def signatures(
        self, node: Node, local_functions: frozenset[str], literals: frozenset[str]
    ) -> list[Signature]:
        return signatures(node, local_functions, literals)

    def template_signatures(self, template: str, statement: bool) -> tuple[Signature, frozenset[Signature]]:
        return template_signatures(template, statement)

    def while_bounded(self, loop: Node) -> bool:
        return while_bounded(loop)
