"""Static quality facts of a JavaScript program on the tree-sitter tree: the ``StaticFacts`` of
``factory.quality.static`` (docs/quality.md), with the tracer's line numbering (``analysis``).

Trivial operations, judged on the tree as Python's are:

- *constant*: an operation none of whose operands reads a variable (``"A".indexOf("x")``,
  ``[7, -1].length``, ``Math.max(3, 4)``, ``!true``); a signed number and a literal written as a
  constructor (``new Set([1, 2])``) are no operation, nor is a call of the program's own function
  or one with no operands. The iterable of a ``for … of`` header and a thrown value are exempt.
- *self*: two or more operands, all the same variable or a copy of it (``x === x``,
  ``Math.min(n, n)``, ``s.includes(s)``, ``xs === xs.slice()``); ``+``, ``*``, ``**``, the shifts
  and ``concat`` do not count (they double the value).
- *identity*: a copy of a copy (``xs.slice().slice()``, ``[...[...xs]]``), a logical operator with
  a ``true``/``false``/``null``/``undefined`` operand, or one variable operand with constant others
  in a neutral form of ``NEUTRAL_BINARY`` / ``NEUTRAL_METHODS`` (``x * 1``, ``x + 0``,
  ``s.slice(0)``, ``s.concat("")``, ``s.replace("a", "a")``, ``s.includes("")``). JavaScript coerces
  where Python raises, so the sample-value check Python runs cannot tell which types an operation
  accepts: the neutral forms are a table, and they assume the operand's grammar type.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from factory.languages.javascript.analysis import _analysis
from factory.languages.javascript.instrument import parameters
from factory.languages.javascript.values import UNDEFINED, literal_value, parser
from factory.languages.tree import field as field_node
from factory.languages.tree import text as node_text
from factory.languages.tree import walk
from factory.quality.static import CONSTANT, IDENTITY, SELF, IfTest, StaticFacts, TrivialOp

_FUNCTIONS = frozenset(
    {"function_declaration", "function_expression", "arrow_function", "method_definition", "function"}
)
#: Operators whose result on two equal operands is still a computation.
_GROWING = frozenset({"+", "*", "**", "<<", ">>", ">>>"})
_LOGICAL = frozenset({"&&", "||", "??"})
#: Methods that grow their receiver by their argument (``a.concat(a)`` doubles it).
_GROWING_METHODS = frozenset({"concat"})
#: (operator, constant, side) of a binary operation that gives its other operand or a constant:
#: side ``right``/``left`` where the constant stands, ``both`` either.
NEUTRAL_BINARY = {
    ("*", 1, "both"),
    ("/", 1, "right"),
    ("**", 1, "right"),
    ("+", 0, "both"),
    ("-", 0, "right"),
}
#: method -> the argument lists (values) that make it return its receiver or a constant.
NEUTRAL_METHODS: dict[str, tuple[tuple[object, ...], ...]] = {
    "slice": ((), (0,)),
    "substring": ((0,),),
    "substr": ((0,),),
    "concat": (("",), ([],)),
    "padStart": ((0,), (0, " ")),
    "padEnd": ((0,), (0, " ")),
    "repeat": ((1,),),
    "flat": ((0,),),
    "indexOf": (("",),),
    "includes": (("",),),
    "startsWith": (("",),),
    "endsWith": (("",),),
}
#: Methods whose two equal string arguments leave the receiver as it was.
_SAME_ARGS_METHODS = frozenset({"replace", "replaceAll"})
#: Calls that copy their one operand: method names on it, and namespace functions of it.
_COPY_METHODS = frozenset({"slice"})
_COPY_FUNCTIONS = frozenset({"Array.from", "structuredClone"})
_NO_VALUE = object()


def analyse(source: str) -> StaticFacts:
    """The static facts of ``source``; SyntaxError when it does not parse."""
    statements = _analysis(source).statements
    root = parser().parse(source.encode("utf-8")).root_node
    functions = [n for n in walk(root, named=True) if n.type in _FUNCTIONS]
    writes = _write_positions(functions)
    bound = _bound(functions, writes)
    names = [n.child_by_field_name("name") for n in functions]
    own = {node_text(name) for name in names if name is not None}
    finder = _TrivialFinder(bound, own, writes)
    finder.visit(root)
    tops = [n for n in functions if not any(a.type in _FUNCTIONS for a in _ancestors(n))]
    dead = [name for f in tops for name in _dead_stores(f, writes)]
    return StaticFacts(
        statements=tuple(
            sorted((line, node.end_point.row + 1) for line, node, _ in statements if not _else_if(node))
        ),
        trivial=tuple(finder.found),
        dead_stores=tuple(dead),
        unread_loops=tuple(_unread_loops(functions, writes)),
        identifiers=frozenset(bound),
        if_tests=tuple(
            IfTest(line, _first_line(field_node(node, "consequence")))
            for line, node, _ in statements
            if node.type == "if_statement"
        ),
    )


def _else_if(node: Node) -> bool:
    """An ``else if``: part of its ``if``, not a statement of its own (Python's ``elif``)."""
    return node.type == "if_statement" and node.parent is not None and node.parent.type == "else_clause"


def _first_line(body: Node) -> int:
    """The line of a body's first statement (its own line when it is one statement; 0: empty)."""
    if body.type != "statement_block":
        return body.start_point.row + 1
    inner = [n for n in body.named_children if n.type != "comment"]
    return inner[0].start_point.row + 1 if inner else 0


def _ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


# --- names ---------------------------------------------------------------------------------------


def _targets(node: Node) -> list[Node]:
    """The identifier nodes a binding pattern or plain target binds."""
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [node]
    return [t for child in node.named_children for t in _targets(child)]


def _write_positions(functions: list[Node]) -> dict[int, str]:
    """Identifier nodes (by start byte) that are written, not read: declared names, parameters,
    function names, loop variables, plain and compound assignment targets (``x += 1`` and ``x++``
    store, as Python's ``x += 1`` does) -> why (``loop``, ``store``, ``bind``)."""
    out: dict[int, str] = {}
    for function in functions:
        for node in walk(function, named=True):
            kind = node.type
            if kind in _FUNCTIONS:
                name = node.child_by_field_name("name")
                if name is not None:
                    out[name.start_byte] = "bind"
                for param in parameters(node):
                    for t in _targets(param):
                        out[t.start_byte] = "bind"
            elif kind == "variable_declarator":
                why = "store" if node.child_by_field_name("value") is not None else "bind"
                for t in _targets(field_node(node, "name")):
                    out.setdefault(t.start_byte, why)
            elif kind == "for_in_statement":
                for t in _targets(field_node(node, "left")):
                    out[t.start_byte] = "loop"
            elif kind == "for_statement":
                init = node.child_by_field_name("initializer")
                if init is not None and init.type in ("lexical_declaration", "variable_declaration"):
                    for declarator in init.named_children:
                        if declarator.type == "variable_declarator":
                            for t in _targets(field_node(declarator, "name")):
                                out[t.start_byte] = "loop"
            elif kind == "catch_clause":
                caught = node.child_by_field_name("parameter")
                for t in _targets(caught) if caught is not None else []:
                    out[t.start_byte] = "bind"
            elif kind in ("assignment_expression", "augmented_assignment_expression"):
                left = field_node(node, "left")
                if left.type in ("identifier", "array_pattern", "object_pattern"):
                    for t in _targets(left):
                        out.setdefault(t.start_byte, "store")
            elif kind == "update_expression":
                argument = field_node(node, "argument")
                if argument.type == "identifier":
                    out.setdefault(argument.start_byte, "store")
    return out


def _reads(node: Node, writes: dict[int, str]) -> set[str]:
    """The names read in ``node``'s subtree (identifiers in no write position)."""
    return {
        node_text(n)
        for n in walk(node, named=True)
        if n.type in ("identifier", "shorthand_property_identifier") and n.start_byte not in writes
    }


def _bound(functions: list[Node], writes: dict[int, str]) -> set[str]:
    """Every name the program binds: functions, parameters, variables (its write positions)."""
    names = set()
    for function in functions:
        for n in walk(function, named=True):
            if n.type in ("identifier", "shorthand_property_identifier_pattern") and n.start_byte in writes:
                names.add(node_text(n))
    return names


def _dead_stores(function: Node, writes: dict[int, str]) -> list[str]:
    """Variables the function stores (not its loop variables) and never reads, in order of first
    store; ``_`` aside."""
    read = _reads(function, writes)
    stored: dict[str, None] = {}
    for n in walk(function, named=True):
        if n.type == "identifier" and writes.get(n.start_byte) == "store" and node_text(n) != "_":
            stored.setdefault(node_text(n))
    return [name for name in stored if name not in read]


def _unread_loops(functions: list[Node], writes: dict[int, str]) -> Iterator[int]:
    """Lines of the ``for`` loops (both forms) whose body never reads a loop variable."""
    seen: set[int] = set()
    for function in functions:
        for node in walk(function, named=True):
            if node.type not in ("for_statement", "for_in_statement") or node.start_byte in seen:
                continue
            seen.add(node.start_byte)
            header = [c for c in node.named_children if c != node.child_by_field_name("body")]
            loop = {node_text(t) for h in header for t in walk(h) if writes.get(t.start_byte) == "loop"}
            if loop and not loop & _reads(field_node(node, "body"), writes):
                yield node.start_point.row + 1


# --- trivial operations --------------------------------------------------------------------------


def _unwrap(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _value(node: Node) -> object:
    """The literal value of an expression, ``_NO_VALUE`` when it is none."""
    try:
        return literal_value(node_text(node))
    except (ValueError, SyntaxError, TypeError, RecursionError):
        return _NO_VALUE


class _TrivialFinder:
    """Collects the trivial operations of a tree; a constant operation's own operands are not
    looked at again (``[7, -1].length + 1`` is one constant operation)."""

    def __init__(self, bound: set[str], own: set[str], writes: dict[int, str]) -> None:
        self.bound, self.own, self.writes = bound, own, writes
        self.found: list[TrivialOp] = []
        self.exempt: set[int] = set()

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "for_in_statement":
            self.exempt.add(field_node(node, "right").id)
        elif kind == "throw_statement" and node.named_child_count:
            self.exempt.add(node.named_children[0].id)
        if node.id not in self.exempt:
            operands = self._operands(node)
            if operands is not None and self._judge(node, operands) == CONSTANT:
                return
        for child in node.named_children:
            self.visit(child)

    def _operands(self, node: Node) -> list[Node] | None:
        """The operands of an operation, None when ``node`` is no operation."""
        kind = node.type
        if kind in ("binary_expression", "augmented_assignment_expression"):
            return [field_node(node, "left"), field_node(node, "right")]
        if kind == "unary_expression":
            argument = _unwrap(field_node(node, "argument"))
            return None if argument.type == "number" else [argument]
        if kind == "array" and _copy_subject(node) is not None:
            return [node.named_children[0].named_children[0]]  # [...xs]: a copy of xs
        if kind == "subscript_expression":
            return [field_node(node, "object"), field_node(node, "index")]
        if kind == "member_expression":
            parent = node.parent
            role = "function" if parent is not None and parent.type == "call_expression" else "left"
            if parent is not None and parent.child_by_field_name(role) == node:
                return None  # a method's name, or an assignment's target
            target = field_node(node, "object")
            return None if self._namespace(target) else [target]
        if kind in ("call_expression", "new_expression"):
            if kind == "new_expression" and _value(node) is not _NO_VALUE:
                return None  # a literal written as a constructor: new Set([1, 2])
            callee = field_node(node, "function" if kind == "call_expression" else "constructor")
            if callee.type == "identifier" and node_text(callee) in self.own:
                return None
            arguments = node.child_by_field_name("arguments")
            args = [
                a.named_children[0] if a.type == "spread_element" else a
                for a in (arguments.named_children if arguments is not None else [])
                if a.type != "comment"
            ]
            if callee.type == "member_expression" and not self._namespace(field_node(callee, "object")):
                args.insert(0, field_node(callee, "object"))
            return args or None
        return None

    def _namespace(self, node: Node) -> bool:
        """A receiver that is a global name (``Math``, ``Array``), not a value."""
        return node.type == "identifier" and node_text(node) not in self.bound

    def _reading(self, node: Node) -> bool:
        return any(
            n.type in ("identifier", "shorthand_property_identifier") and node_text(n) in self.bound
            for n in walk(node, named=True)
        )

    def _judge(self, node: Node, operands: list[Node]) -> str | None:
        kind = self._kind(node, operands)
        if kind is not None:
            self.found.append(TrivialOp(kind, node.start_point.row + 1, node_text(node)))
        return kind

    def _kind(self, node: Node, operands: list[Node]) -> str | None:
        reading = [o for o in operands if self._reading(o)]
        if not reading:
            return CONSTANT
        operator = _operator(node)
        if len(operands) >= 2 and operator not in _GROWING and _method(node) not in _GROWING_METHODS:
            same = {self._copied(o) for o in operands}
            if len(same) == 1 and None not in same:
                return SELF
        copied = _copy_subject(node)
        if copied is not None and _copy_subject(copied) is not None:
            return IDENTITY
        if operator in _LOGICAL and any(_bool_constant(o) for o in operands):
            return IDENTITY
        if len(reading) == 1 and len(operands) >= 2 and _neutral(node, operands, reading[0]):
            return IDENTITY
        return None

    def _copied(self, node: Node) -> str | None:
        """The variable ``node`` is or copies (``x``, ``x.slice()``, ``[...x]``, ``Array.from(x)``)."""
        node = _unwrap(node)
        if node.type == "identifier":
            return node_text(node) if node_text(node) in self.bound else None
        subject = _copy_subject(node)
        return None if subject is None else self._copied(subject)


def _bool_constant(node: Node) -> bool:
    value = _value(node)
    return isinstance(value, bool) or value is None or value is UNDEFINED


def _operator(node: Node) -> str | None:
    op = node.child_by_field_name("operator")
    if op is None:
        return None
    text = node_text(op)
    return text[:-1] if node.type == "augmented_assignment_expression" else text


def _method(node: Node) -> str | None:
    """The method name of a method call (``xs.slice()``: ``slice``), else None."""
    if node.type != "call_expression":
        return None
    callee = field_node(node, "function")
    if callee.type != "member_expression":
        return None
    return node_text(field_node(callee, "property"))


def _call_args(node: Node) -> list[Node]:
    arguments = node.child_by_field_name("arguments")
    return [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]


def _copy_subject(node: Node) -> Node | None:
    """What ``node`` copies: ``x.slice()`` / ``x.slice(0)``, ``[...x]``, ``Array.from(x)``,
    ``structuredClone(x)``; None when it is no copy."""
    node = _unwrap(node)
    if node.type == "array" and [c.type for c in node.named_children] == ["spread_element"]:
        return node.named_children[0].named_children[0]
    if node.type != "call_expression":
        return None
    callee, args = field_node(node, "function"), _call_args(node)
    method = _method(node)
    if method in _COPY_METHODS and [_value(a) for a in args] in ([], [0]):
        return field_node(callee, "object")
    if node_text(callee) in _COPY_FUNCTIONS and len(args) == 1:
        return args[0]
    return None


def _neutral(node: Node, operands: list[Node], subject: Node) -> bool:
    """Whether the operation with one variable operand ``subject`` and constant others is a
    neutral form (``NEUTRAL_BINARY``, ``NEUTRAL_METHODS``, equal ``replace`` arguments)."""
    others = [o for o in operands if o != subject]
    values = [_value(o) for o in others]
    if any(v is _NO_VALUE for v in values):
        return False
    operator = _operator(node)
    if operator is not None and len(operands) == 2:
        side = "right" if operands[1] != subject else "left"
        constant = values[0]
        return (
            isinstance(constant, int)
            and not isinstance(constant, bool)
            and any((operator, constant, s) in NEUTRAL_BINARY for s in (side, "both"))
        )
    method = _method(node)
    if method is None or operands[0] != subject:
        return False  # the variable is an argument, not the receiver
    if method in _SAME_ARGS_METHODS:
        return len(values) == 2 and isinstance(values[0], str) and values[0] == values[1]
    return any(_same_values(form, values) for form in NEUTRAL_METHODS.get(method, ()))


def _same_values(form: tuple[object, ...], values: list[object]) -> bool:
    if len(form) != len(values):
        return False
    return all(type(f) is type(v) and f == v for f, v in zip(form, values, strict=True))
