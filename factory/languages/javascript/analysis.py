"""JavaScript's ``analysis`` facet: the statement ``Analysis`` of ``factory.languages.base`` on the
tree-sitter-javascript tree, with the meanings of Python's (``factory.tasks.analysis``,
``factory.languages.python.ablation``) and the tracer's line numbering (docs/languages.md §6.3.1).

A statement line is the line where the tracer reports a statement's step: its first line, the
``while`` of a ``do … while``, the ``if`` of an ``else if``, the ``catch`` of a catch clause.
Only statements inside functions with a block body are reachable (the top level runs untraced);
function declarations, blocks, labels, ``else``, ``finally``, empty statements and directives are
never steps. Kinds: ``simple`` (expressions and declarations), ``return``, ``throw``, ``break``,
``continue``, ``if``, ``for`` (both ``for`` forms), ``while`` (``do … while`` too: its line runs
once per test, as a ``while``'s), ``try``, ``catch``. A statement's names are those of its own
expressions, never of a nested function's.

One parse and one walk per program (``_analysis``, cached by source text).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tree_sitter import Node

from factory.languages.base import StatementLine
from factory.languages.javascript.instrument import bound_names, function_name, is_directive, parameters
from factory.languages.javascript.values import literal_value, parser
from factory.languages.text import line_count
from factory.languages.tree import field as field_node
from factory.languages.tree import text as node_text
from factory.languages.tree import walk
from factory.trace.source import CACHE_SIZE

_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
        "generator_function",
    }
)
_SIMPLE_KINDS = {
    "expression_statement": "simple",
    "lexical_declaration": "simple",
    "variable_declaration": "simple",
    "debugger_statement": "simple",
    "return_statement": "return",
    "throw_statement": "throw",
    "break_statement": "break",
    "continue_statement": "continue",
}
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
_BRANCHES = frozenset({"if_statement", "ternary_expression", "catch_clause"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
# The node types a literal's text may start as (``literal_value`` decides).
_MAYBE_LITERAL = frozenset(
    {"number", "string", "true", "false", "null", "undefined", "array", "object", "template_string"}
    | {"unary_expression", "new_expression"}
)
# Global objects and builtins a value may read: never a variable to pass through.
_GLOBALS = frozenset(
    {"Math", "Number", "String", "Object", "Array", "JSON", "Boolean", "parseInt", "parseFloat"}
    | {"isNaN", "Infinity", "NaN", "undefined", "Set", "Map"}
)


def statement_info(source: str) -> dict[int, StatementLine]:
    """The lines that start a statement a trace can reach (the cached dict: callers must not
    modify it). SyntaxError when the source does not parse."""
    return _analysis(source).lines


def program_features(source: str) -> dict[str, Any]:
    """``n_lines`` (up to the last non-blank line), ``n_loops`` (``for``, ``for…of``/``in``,
    ``while``, ``do``), ``n_branches`` (``if``/``else if``, conditional expressions, ``catch``
    clauses), ``has_helper`` (more than one named function: declared, or bound to a name),
    ``max_depth`` (deepest nesting of compound statements in a function body; a flat body is 0,
    an ``else if`` sits at its ``if``'s depth). A fresh dict each call."""
    return dict(_analysis(source).features)


def has_multiline_statement(source: str) -> bool:
    """Whether a statement's header (a simple statement: the whole of it) spans several lines;
    False when the source does not parse."""
    try:
        return _analysis(source).multiline
    except SyntaxError:
        return False


def branch_tests(source: str) -> list[int]:
    """The lines of the ``if`` and ``else if`` tests in the program's functions, in source order."""
    return [line for line, node, _ in _analysis(source).statements if node.type == "if_statement"]


def removal_variants(source: str) -> list[tuple[int, str]]:
    """(first line, source) per removable statement, in source order (a compound statement before the
    statements in it): its text replaced by ``;`` (an empty statement, valid wherever a statement
    is), the text after it on its last line moved up to its first, the lines it spanned left
    blank, so no other line moves. Removable: simple statements but ``return`` (declarations
    included: a variant where a later read of the variable throws ReferenceError counts as a
    changed outcome, as any failing run does, and the declaration as relevant), compound ones
    whole (an ``if`` with its ``else`` chain; an ``else if`` never alone). Never removed: ``return``,
    function declarations, directives."""
    analysis = _analysis(source)
    encoded = source.encode("utf-8")
    return [(line, _without(encoded, node)) for line, node, removable in analysis.statements if removable]


def negated_tests(source: str) -> list[tuple[int, str]]:
    """(first line, source) per ``if``/``else if`` test on one line: the program with that test
    negated (``if (!(x > 0))``), every line where it was (``removal_variants``' order)."""
    encoded = source.encode("utf-8")
    flips = []
    for line, node, _ in _analysis(source).statements:
        test = node.child_by_field_name("condition") if node.type == "if_statement" else None
        if test is None or test.start_point[0] != test.end_point[0]:
            continue
        inner = encoded[test.start_byte + 1 : test.end_byte - 1]  # inside the parentheses
        flipped = encoded[: test.start_byte] + b"(!(" + inner + b"))" + encoded[test.end_byte :]
        flips.append((line, flipped.decode("utf-8")))
    return flips


def passthrough_variants(source: str) -> list[tuple[int, str]]:
    """(first line, source) per assignment statement in the program's functions (``let``/``const``/
    ``var`` with one declarator ``name = value``, or ``name = value``) and variable its value reads:
    the value replaced by that variable's name, every other line where it was. An operation that
    changes nothing on a program's inputs passes its variable's value through unchanged: the
    variant's outcome is the original's on every input. Statements in ``removal_variants``' order,
    the variables in order of first appearance; none for a value that is a name or a literal.
    Not variables to pass through: the assigned name (the variant would be its removal), callees
    (a method's object is one), property names, names bound inside the value (a nested function's
    parameters and locals), ``_GLOBALS``."""
    encoded = source.encode("utf-8")
    variants = []
    for line, node, _ in _analysis(source).statements:
        assignment = _assignment(node)
        if assignment is None:
            continue
        name, value = assignment
        inner = value
        while inner.type == "parenthesized_expression" and inner.named_child_count == 1:
            inner = inner.named_children[0]
        if inner.type in ("identifier", "undefined") or _is_literal(inner):
            continue
        reads: list[str] = []
        _reads(value, frozenset({name}) | _GLOBALS, reads)
        for read in dict.fromkeys(reads):
            variants.append((line, _replaced(encoded, value, read.encode("utf-8"))))
    return variants


def once_variants(source: str) -> list[tuple[int, str]]:
    """(first line, source) per loop in the program's functions bounded by a literal count above 1
    (``for (…; i < N; …)``, ``while (count < N)``: ``N`` a decimal integer): the program with that
    count replaced by ``1``, so the loop's body runs at most once, every line where it was. A loop
    whose repetitions change nothing gives the variant's outcome on every input.
    ``removal_variants``' order."""
    encoded = source.encode("utf-8")
    variants = []
    for line, node, _ in _analysis(source).statements:
        bound = _literal_bound(node)
        if bound is not None:
            variants.append((line, _replaced(encoded, bound, b"1")))
    return variants


def _literal_bound(loop: Node) -> Node | None:
    """The number of a ``for`` loop's test ``name < N`` or a ``while`` loop's ``(name < N)``, ``N``
    a decimal integer above 1; None for any other statement or test."""
    if loop.type == "for_statement":
        test = loop.child_by_field_name("condition")
    elif loop.type == "while_statement":
        inner = [c for c in field_node(loop, "condition").named_children if c.type != "comment"]
        test = inner[0] if len(inner) == 1 else None
    else:
        return None
    if test is None or test.type != "binary_expression" or field_node(test, "operator").type != "<":
        return None
    left, right = field_node(test, "left"), field_node(test, "right")
    if left.type != "identifier" or right.type != "number":
        return None
    count = node_text(right)
    if not (count.isascii() and count.isdigit()) or count.startswith("0") or int(count) <= 1:
        return None  # (a leading 0 may be a legacy octal literal)
    return right


def _assignment(statement: Node) -> tuple[str, Node] | None:
    """(name, value) of ``let``/``const``/``var name = value`` (one declarator) or ``name = value``."""
    if statement.type in _DECLARATIONS:
        declarators = [d for d in statement.named_children if d.type == "variable_declarator"]
        if len(declarators) != 1:
            return None
        target, value = field_node(declarators[0], "name"), declarators[0].child_by_field_name("value")
    elif statement.type == "expression_statement":
        expressions = [c for c in statement.named_children if c.type != "comment"]
        if len(expressions) != 1 or expressions[0].type != "assignment_expression":
            return None
        target, value = field_node(expressions[0], "left"), field_node(expressions[0], "right")
    else:
        return None
    if target.type != "identifier" or value is None:
        return None
    return node_text(target), value


def _reads(node: Node, hidden: frozenset[str], reads: list[str]) -> None:
    """Append the variables ``node`` reads, in source order, but the ``hidden`` ones (bound inside
    the value, or never passed through) and callees."""
    kind = node.type
    if kind in ("identifier", "shorthand_property_identifier"):
        if node_text(node) not in hidden:
            reads.append(node_text(node))
        return
    if kind in _FUNCTIONS or kind in ("class", "class_declaration"):
        hidden = hidden | _bound_in(node)
    children = node.named_children
    if kind in ("call_expression", "new_expression"):
        callee = node.child_by_field_name("function" if kind == "call_expression" else "constructor")
        children = [c for c in children if c != callee or callee.type != "identifier"]
    elif kind == "assignment_expression":  # a plain name or a pattern assigned is not read
        left = field_node(node, "left")
        if left.type in ("identifier", "array_pattern", "object_pattern"):
            children = [c for c in children if c != left]
    for child in children:
        _reads(child, hidden, reads)


def _bound_in(scope: Node) -> frozenset[str]:
    """The names a function (or class) binds for its own text: its name, its parameters, what its
    body declares (nested functions' own names left to them)."""
    names = []
    name = scope.child_by_field_name("name")
    if name is not None and name.type == "identifier":
        names.append(node_text(name))
    if scope.type in _FUNCTIONS:
        for param in parameters(scope):
            names += bound_names(param)
    body = scope.child_by_field_name("body")
    if body is not None:
        names += _declared_in(body)
    return frozenset(names)


def _declared_in(node: Node) -> list[str]:
    """The names declarations in ``node`` bind, nested functions left out (their names kept)."""
    kind = node.type
    if kind in _FUNCTIONS or kind in ("class", "class_declaration"):
        name = node.child_by_field_name("name")
        declared = kind in ("function_declaration", "generator_function_declaration", "class_declaration")
        return [node_text(name)] if declared and name is not None else []
    # (a ``for`` header's declaration is a declaration node of its own, met below)
    names = _declared(node) if kind in _DECLARATIONS or kind in ("for_in_statement", "catch_clause") else []
    for child in node.named_children:
        names += _declared_in(child)
    return names


def _without(src: bytes, node: Node) -> str:
    """``src`` with ``node`` replaced by ``;``, every other line where it was."""
    return _replaced(src, node, b";")


def _replaced(src: bytes, node: Node, text: bytes) -> str:
    """``src`` with ``node`` replaced by ``text`` (one line), every other line where it was: the text
    after ``node`` on its last line moves up, the lines it spanned are left blank after it."""
    start, end = node.start_byte, node.end_byte
    blanks = b"\n" * src.count(b"\n", start, end)
    line_end = src.find(b"\n", end)
    line_end = len(src) if line_end < 0 else line_end
    return (src[:start] + text + src[end:line_end] + blanks + src[line_end:]).decode("utf-8")


# --- the walk -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Analysis:
    lines: dict[int, StatementLine]
    features: tuple[tuple[str, Any], ...]
    multiline: bool
    statements: tuple[tuple[int, Node, bool], ...]  # (first line, statement, removable), source order


# StatementLine's fields after ``line`` up to ``constant``.
_Pending = tuple[str, str, bool, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]


@dataclass
class _Frame:
    """The statements of one function found so far."""

    func: str
    pending: dict[int, _Pending] = field(default_factory=dict)  # line -> StatementLine's fields
    local_names: list[str] = field(default_factory=list)
    first: bool = True


class _Names(NamedTuple):
    """What a statement's own expressions hold, in source order."""

    assigned: list[str]
    read: list[str]
    called: list[str]


@functools.lru_cache(maxsize=CACHE_SIZE)
def _analysis(source: str) -> _Analysis:
    root = parser().parse(source.encode("utf-8")).root_node
    if root.has_error:
        raise SyntaxError("the program does not parse as JavaScript")
    functions: list[Node] = []
    loops = branches = named = 0
    for node in walk(root, named=True):
        kind = node.type
        if kind in _LOOPS:
            loops += 1
        elif kind in _BRANCHES:
            branches += 1
        elif kind in _FUNCTIONS:
            named += kind == "function_declaration" or function_name(node) != "<anonymous>"
            body = node.child_by_field_name("body")
            if body is not None and body.type == "statement_block":
                functions.append(node)
    walker = _Walk()
    for function in functions:
        walker.function(function)
    features = {
        "n_lines": line_count(source),
        "n_loops": loops,
        "n_branches": branches,
        "has_helper": named > 1,
        "max_depth": max((_depth(_body(f), 0) for f in functions), default=0),
    }
    walker.statements.sort(key=lambda item: item[1].start_byte)
    return _Analysis(walker.found, tuple(features.items()), walker.multiline, tuple(walker.statements))


def _body(function: Node) -> list[Node]:
    body = function.child_by_field_name("body")
    assert body is not None
    return body.named_children


class _Walk:
    """The statements of every function, collected into ``found`` (the first statement of a line
    describes it) and ``statements`` (every statement, for removal and branch tests)."""

    def __init__(self) -> None:
        self.found: dict[int, StatementLine] = {}
        self.statements: list[tuple[int, Node, bool]] = []
        self.multiline = False

    def function(self, node: Node) -> None:
        frame = _Frame(function_name(node))
        for param in parameters(node):
            frame.local_names += bound_names(param)
        statements = _body(node)
        while statements and (is_directive(statements[0]) or statements[0].type == "comment"):
            statements = statements[1:]
        for statement in statements:
            self.statement(statement, frame, False)
        local_names = frozenset(frame.local_names)
        for line, fields in frame.pending.items():
            if line not in self.found:
                self.found[line] = StatementLine(line, *fields, local_names)

    def statement(self, node: Node, frame: _Frame, conditional: bool, *, removable: bool = True) -> None:
        kind = node.type
        simple = _SIMPLE_KINDS.get(kind)
        if simple is not None:
            self.statements.append((_line(node), node, removable and simple != "return"))
            self.step(node, frame, simple, conditional, [node], node)
        elif kind == "if_statement":
            self.statements.append((_line(node), node, removable))
            condition = field_node(node, "condition")
            self.step(node, frame, "if", conditional, [condition], condition)
            self.statement(field_node(node, "consequence"), frame, True)
            alternative = node.child_by_field_name("alternative")
            if alternative is not None:
                for inner in alternative.named_children:
                    # An `else if` is listed, never removed alone (it goes with its `if`).
                    self.statement(inner, frame, True, removable=inner.type != "if_statement")
        elif kind == "while_statement":
            self.statements.append((_line(node), node, removable))
            condition = field_node(node, "condition")
            self.step(node, frame, "while", conditional, [condition], condition)
            self.statement(field_node(node, "body"), frame, True)
        elif kind == "do_statement":
            self.statements.append((_line(node), node, removable))
            self.statement(field_node(node, "body"), frame, True)
            keyword = next(c for c in node.children if c.type == "while")
            condition = field_node(node, "condition")
            self.step(keyword, frame, "while", conditional, [condition], condition)
        elif kind in ("for_statement", "for_in_statement"):
            self.statements.append((_line(node), node, removable))
            header = [
                node.children[i]
                for i in range(node.child_count)
                if node.field_name_for_child(i) not in (None, "body", "kind", "operator")
            ]
            close = next(c for c in reversed(node.children) if c.type == ")")
            self.step(node, frame, "for", conditional, header, close)
            self.statement(field_node(node, "body"), frame, True)
        elif kind == "try_statement":
            self.statements.append((_line(node), node, removable))
            self.step(node, frame, "try", conditional, [], None)
            self.statement(field_node(node, "body"), frame, True)
            handler = node.child_by_field_name("handler")
            if handler is not None:
                param = handler.child_by_field_name("parameter")
                self.step(handler, frame, "catch", True, [param] if param else [], param)
                self.statement(field_node(handler, "body"), frame, True)
            finalizer = node.child_by_field_name("finalizer")
            if finalizer is not None:
                self.statement(field_node(finalizer, "body"), frame, True)
        elif kind == "statement_block":
            for inner in node.named_children:
                self.statement(inner, frame, conditional)
        elif kind == "labeled_statement":
            self.statement(field_node(node, "body"), frame, conditional)
        # else: function declarations (their bodies are frames of their own), empty statements,
        # comments: never steps

    def step(
        self,
        node: Node,
        frame: _Frame,
        kind: str,
        conditional: bool,
        header: list[Node],
        header_end: Node | None,
    ) -> None:
        """A step at ``node``'s first line; ``header``: the expressions its step evaluates."""
        line = _line(node)
        if header_end is not None and header_end.end_point.row + 1 > line:
            self.multiline = True
        names = _names(header, node)
        frame.local_names += _declared(node)
        first, frame.first = frame.first, False
        if line in frame.pending:
            return
        frame.pending[line] = (
            kind,
            frame.func,
            conditional,
            first,
            tuple(dict.fromkeys(names.assigned)),
            tuple(dict.fromkeys(names.read)),
            tuple(dict.fromkeys(names.called)),
            _constant(node),
        )


def _line(node: Node) -> int:
    return node.start_point.row + 1


def _declared(node: Node) -> list[str]:
    """The names a step's statement declares: ``let``/``const``/``var``, a ``for`` header's, a
    ``catch`` parameter."""
    kind = node.type
    if kind in _DECLARATIONS:
        return _declarator_names(node)
    if kind == "for_statement":
        init = node.child_by_field_name("initializer")
        return _declarator_names(init) if init is not None and init.type in _DECLARATIONS else []
    if kind == "for_in_statement" and node.child_by_field_name("kind") is not None:
        return bound_names(field_node(node, "left"))
    if kind == "catch_clause":
        param = node.child_by_field_name("parameter")
        return bound_names(param) if param is not None else []
    return []


def _declarator_names(declaration: Node) -> list[str]:
    return [
        name
        for declarator in declaration.named_children
        if declarator.type == "variable_declarator"
        for name in bound_names(field_node(declarator, "name"))
    ]


def _names(header: list[Node], statement: Node) -> _Names:
    """The names ``header`` assigns, reads and calls, in source order, nested functions left out.
    A declaration, a ``for…of``/``in`` variable and a ``catch`` parameter are assigned; an
    assignment's target is assigned (its identifiers: ``xs[i] = v`` assigns ``xs`` and ``i``, as
    Python's targets do), and read too unless it is a plain name or a pattern bound by ``=``."""
    names = _Names([], [], [])
    if statement.type == "catch_clause":
        param = statement.child_by_field_name("parameter")
        names.assigned.extend(bound_names(param) if param is not None else [])
        return names
    if statement.type == "for_in_statement":
        left = field_node(statement, "left")
        declared = statement.child_by_field_name("kind") is not None
        if declared or left.type in ("identifier", "array_pattern", "object_pattern"):
            names.assigned.extend(bound_names(left))
            header = [n for n in header if n != left]
    for node in header:
        _walk(node, names)
    return names


def _walk(node: Node, names: _Names) -> None:
    kind = node.type
    if kind in _FUNCTIONS:
        return
    if kind == "identifier" or kind == "shorthand_property_identifier":
        names.read.append(node_text(node))
        return
    if kind == "variable_declarator":
        names.assigned.extend(bound_names(field_node(node, "name")))
        value = node.child_by_field_name("value")
        if value is not None:
            _walk(value, names)
        return
    if kind == "assignment_expression":
        left = field_node(node, "left")
        if left.type in ("identifier", "array_pattern", "object_pattern"):
            names.assigned.extend(bound_names(left))
        else:
            names.assigned.extend(_identifiers(left))
            _walk(left, names)
        _walk(field_node(node, "right"), names)
        return
    if kind in ("augmented_assignment_expression", "update_expression"):
        target = field_node(node, "left" if kind != "update_expression" else "argument")
        names.assigned.extend(_identifiers(target))
    elif kind == "call_expression":
        function = field_node(node, "function")
        if function.type == "identifier":
            names.called.append(node_text(function))
    for child in node.named_children:
        _walk(child, names)


def _identifiers(node: Node) -> list[str]:
    """The variable names in an expression (not in nested functions)."""
    names = _Names([], [], [])
    _walk(node, names)
    return names.read


def _constant(node: Node) -> bool:
    """``let v = <literal>`` (every declarator's value a literal, or none: ``undefined``) or
    ``v = <literal>``: the state answer needs no reasoning."""
    if node.type in _DECLARATIONS:
        declarators = [d for d in node.named_children if d.type == "variable_declarator"]
        return bool(declarators) and all(_is_literal(d.child_by_field_name("value")) for d in declarators)
    if node.type == "expression_statement" and node.named_child_count == 1:
        expression = node.named_children[0]
        if expression.type == "assignment_expression":
            return _is_literal(field_node(expression, "right"))
    return False


def _is_literal(value: Node | None) -> bool:
    if value is None:
        return True
    if value.type not in _MAYBE_LITERAL:
        return False
    try:
        literal_value(node_text(value))
    except (ValueError, SyntaxError, TypeError, RecursionError):
        return False
    return True


def _depth(statements: list[Node], depth: int) -> int:
    """The deepest nesting of compound statements among ``statements`` (at ``depth``)."""
    deepest = depth
    for node in statements:
        for inner, level in _nested(node, depth):
            if inner:
                deepest = max(deepest, _depth(inner, level))
    return deepest


def _nested(node: Node, depth: int) -> list[tuple[list[Node], int]]:
    """The statement lists inside ``node`` and their depths."""
    kind = node.type
    if kind in ("statement_block", "labeled_statement"):
        inner = node.named_children if kind == "statement_block" else [field_node(node, "body")]
        return [(inner, depth)]
    if kind == "if_statement":
        out = [(_statements_of(field_node(node, "consequence")), depth + 1)]
        alternative = node.child_by_field_name("alternative")
        if alternative is not None:
            inner = alternative.named_children
            same = len(inner) == 1 and inner[0].type == "if_statement"  # else if: the if's depth
            out.append((inner, depth) if same else (_statements_of(inner[0]) if inner else [], depth + 1))
        return out
    if kind in _LOOPS:
        return [(_statements_of(field_node(node, "body")), depth + 1)]
    if kind == "try_statement":
        blocks = [field_node(node, "body")]
        for clause in ("handler", "finalizer"):
            child = node.child_by_field_name(clause)
            if child is not None:
                blocks.append(field_node(child, "body"))
        return [(_statements_of(block), depth + 1) for block in blocks]
    return []


def _statements_of(node: Node) -> list[Node]:
    """A body's statements: a block's, or the one statement."""
    return node.named_children if node.type == "statement_block" else [node]
