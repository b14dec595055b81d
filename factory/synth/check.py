"""Static tier check on the tree-sitter tree: independent of how the generator built the program.

It re-derives, from the source alone, what the tier promises: the number of functions and that the
entry calls the helper, the control-flow nesting depth, that every ``while`` loop is bounded by a
counter, one statement per line, how often the target operation is used and whether other
operations appear. Operations are recognised by the *shape* of their templates (a method call
named ``pop``, a ``+`` operator, a ``[i:]`` slice...), so no operation is special-cased here.
tree-sitter parses in microseconds; libcst took ~10 ms a program, more than the stage's budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

import tree_sitter_python
from tree_sitter import Language, Node, Parser

from factory.grammar.model import Grammar
from factory.synth.tiers import ENTRY, HELPER, TIERS

Signature = tuple
_PARSER = Parser(Language(tree_sitter_python.language()))
_COMPOUND = {"if_statement", "for_statement", "while_statement"}
_NUMBERS = {"integer", "float"}


def parse(source: str) -> Node:
    return _PARSER.parse(source.encode()).root_node


def _text(node: Node) -> str:
    text = node.text
    assert text is not None  # the tree was parsed from the source text, which it keeps
    return text.decode()


def _field(node: Node, name: str) -> Node:
    """``node``'s child in field ``name``, one that the grammar gives every node of its kind."""
    child = node.child_by_field_name(name)
    assert child is not None, (node.type, name)
    return child


def walk(node: Node) -> Iterator[Node]:
    """Every node below ``node`` (itself first), in pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


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
        if kind == "call" and _text(n) in literals:
            continue
        if kind == "call":
            func = _field(n, "function")
            if func.type == "attribute":
                found.append(("method", _text(_field(func, "attribute"))))
            elif func.type == "identifier" and _text(func) not in local_functions:
                found.append(("call", _text(func)))
        elif kind == "binary_operator":
            found.append(("binop", _text(_field(n, "operator"))))
        elif kind == "unary_operator":
            # A negative number is a literal, not an operation.
            if _field(n, "argument").type not in _NUMBERS:
                found.append(("unary", _text(_field(n, "operator"))))
        elif kind == "not_operator":
            found.append(("unary", "not"))
        elif kind == "boolean_operator":
            found.append(("boolop", _text(_field(n, "operator"))))
        elif kind == "comparison_operator":
            found.extend(("cmp", " ".join(_text(op).split())) for op in n.children_by_field_name("operators"))
        elif kind == "augmented_assignment":
            found.append(("augassign", _text(_field(n, "operator"))))
        elif kind == "assignment" and _field(n, "left").type == "subscript":
            found.append(("setitem",))
            skip.add(_field(n, "left").id)
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
    while node.type == "call" and _field(node, "function").type == "identifier":
        args = _field(node, "arguments").named_children
        if len(args) != 1 or args[0].type not in ("call", "binary_operator", "subscript"):
            break
        node = args[0]
    if statement and node.type in ("assignment", "augmented_assignment"):
        pass
    key = signatures(node)[0]
    return key, frozenset(signatures(root))


def _max_depth(node: Node, depth: int = 0) -> int:
    deepest = depth
    for child in node.children:
        if child.type in _COMPOUND:
            for part in child.children:
                if part.type == "block":
                    deepest = max(deepest, _max_depth(part, depth + 1))
                elif part.type in ("elif_clause", "else_clause"):  # same depth as their if
                    deepest = max(deepest, _max_depth(part, depth))
        elif child.type in ("function_definition", "class_definition", "lambda"):
            deepest = max(deepest, 99)  # nested definitions are never generated
        else:
            deepest = max(deepest, _max_depth(child, depth))
    return deepest


def _assigned_names(nodes: list[Node]) -> set[str]:
    names: set[str] = set()
    for top in nodes:
        for n in walk(top):
            if n.type in ("assignment", "augmented_assignment", "for_statement"):
                target = n.child_by_field_name("left")
                if target is not None and target.type == "identifier":
                    names.add(_text(target))
    return names


def _while_bounded(loop: Node) -> bool:
    """``while c < N:`` whose body ends with ``c += <positive int>``, never assigns ``c`` or N
    elsewhere and has no ``continue`` (which would skip the increment); N a literal or a name."""
    test = _field(loop, "condition")
    if test.type != "comparison_operator" or [_text(o) for o in test.children_by_field_name("operators")] != [
        "<"
    ]:
        return False
    counter, bound = test.named_children
    if counter.type != "identifier" or bound.type not in ("integer", "identifier"):
        return False
    body = _field(loop, "body").named_children
    if not body or body[-1].type != "expression_statement":
        return False
    last = body[-1].named_children[0]
    ok_last = (
        last.type == "augmented_assignment"
        and _text(_field(last, "left")) == _text(counter)
        and _text(_field(last, "operator")) == "+="
        and _field(last, "right").type == "integer"
        and int(_text(_field(last, "right"))) >= 1
    )
    if not ok_last:
        return False
    assigned = _assigned_names(body[:-1])
    if _text(counter) in assigned or (bound.type == "identifier" and _text(bound) in assigned):
        return False
    return not any(n.type == "continue_statement" for top in body[:-1] for n in walk(top))


def check_program(source: str, tier: int, target: str, grammar: Grammar) -> list[str]:
    """Reasons the program breaks its tier's promises (empty: it meets them)."""
    spec = TIERS[tier]
    root = parse(source)
    if root.has_error:
        return ["syntax_error"]
    reasons = []
    functions = [n for n in root.children if n.type == "function_definition"]
    imports = [n for n in root.children if n.type == "import_statement"]
    names = [_text(_field(fn, "name")) for fn in functions]
    if len(functions) + len(imports) != len(root.children) or ENTRY not in names:
        reasons.append("shape:entry_missing_or_extra_code")
    if spec.helper:
        entry = functions[names.index(ENTRY)] if ENTRY in names else None
        calls = [
            _text(_field(n, "function"))
            for n in (walk(entry) if entry is not None else [])
            if n.type == "call"
        ]
        if len(functions) != 2 or HELPER not in calls:
            reasons.append("shape:helper_not_called")
    elif len(functions) != 1:
        reasons.append("shape:unexpected_helper")
    depth = max((_max_depth(_field(fn, "body")) for fn in functions), default=0)
    if depth != spec.depth:
        reasons.append(f"depth:{depth}_not_{spec.depth}")
    rows: set[int] = set()
    for n in walk(root):
        if n.type == "while_statement" and not _while_bounded(n):
            reasons.append("while:unbounded")
            break
        if n.type.endswith("_statement") and n.parent is not None and n.parent.type in ("block", "module"):
            if n.start_point[0] in rows:
                reasons.append("line:several_statements")
                break
            rows.add(n.start_point[0])
    op = grammar.op(target)
    key, allowed = template_signatures(op.template, op.statement)
    empty_forms = frozenset(t.literal["empty"] for t in grammar.types.values() if t.literal)
    found = Counter(signatures(root, frozenset(names), empty_forms))
    if found[key] < 2:
        reasons.append("target:used_fewer_than_2")
    others = [s for s in found if s not in allowed]
    if not spec.other_ops and others:
        reasons.append("ops:other_operation_in_tier1")
    if spec.other_ops and not others:
        reasons.append("ops:no_other_operation")
    return reasons
