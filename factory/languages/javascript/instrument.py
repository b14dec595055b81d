"""Instrument a JavaScript program for the tracer (``tracer.js``): hook calls written into the
source on the tree-sitter-javascript tree, at the points where a step starts and where its
variables are read back (docs/languages.md §6.3 gives the rules).

The program's text becomes the body of an arrow function that takes the hooks as parameters and
returns a table of the program's top-level names, so that a runtime loads it once and calls any
entry. Every hook and every added name starts with ``PREFIX``; a program that uses the prefix is
refused. Only code inside functions is instrumented (loading the program is not traced, as in
Python). Insertions add no line break, so the instrumented program keeps every line number.

The hooks (their arguments: ``F`` the frame record, ``L`` a line, ``s`` a capture site, whose
variable names are ``Instrumented.sites[s]``, ``[...]`` those variables' values):

* ``$$evE(name, s, [...params])``: a traced function starts; returns its frame record ``F``.
* ``$$evS(F, L)``: a step at line L starts (throws the stop sentinel past the step budget).
* ``$$evC(F, s, [...])``: the step's statement has run: record what changed in its frame.
* ``$$evR(F, s, value, [...])``: ``$$evC`` then ``value`` (``return``, ``throw`` and tests).
* ``$$evX(F, error, s, [...])``: entering ``catch``/``finally``: rethrow the stop sentinel, and
  record what the interrupted step changed.
* ``$$evI(F, L, iterable)``, ``$$evK(F, L, object)``: ``for…of``'s iterable, and ``for…in``'s keys
  as an iterable, with a step at L before each later ``next()`` (the first is the header's own step).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from factory.languages.javascript.values import parser
from factory.languages.tree import field as field_node
from factory.languages.tree import text as node_text

#: Every name the instrumentation adds starts with this; programs that contain it are refused.
PREFIX = "$$ev"
#: The hooks, in the order the instrumented arrow function takes them.
HOOKS = ("$$evE", "$$evS", "$$evC", "$$evR", "$$evX", "$$evI", "$$evK")
_FRAME = "$$evF"
_CAUGHT = "$$evErr"
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
# Line breaks other than \n and \r\n: steps report tree-sitter's rows (\n), questions quote
# ``str.splitlines`` lines, and JavaScript counts \r, U+2028 and U+2029 too.
_ODD_LINE_BREAK = re.compile("\r(?!\n)|[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")

#: Constructs the tracer does not follow (their control flow has no rule yet): refused.
_UNSUPPORTED = {
    "generator_function_declaration": "a generator function",
    "generator_function": "a generator function",
    "class_declaration": "a class",
    "class": "a class",
    "switch_statement": "a switch statement",
    "with_statement": "a with statement",
    "import_statement": "an import",
    "export_statement": "an export",
    "yield_expression": "yield",
    "await_expression": "await",
}
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function", "method_definition"})
# Statements that get a step hook written before them (and, for some, a capture after them).
_SIMPLE = frozenset(
    {
        "expression_statement",
        "lexical_declaration",
        "variable_declaration",
        "return_statement",
        "throw_statement",
        "break_statement",
        "continue_statement",
        "debugger_statement",
    }
)
_CHANGES_NOTHING = frozenset({"break_statement", "continue_statement", "debugger_statement"})
# Parents in which a statement sits in a list (elsewhere it is a body: `if (c) x++;`).
_STATEMENT_LISTS = frozenset({"statement_block", "program"})


class InstrumentError(ValueError):
    """The program cannot be traced: it does not parse, it uses the reserved prefix, or it uses a
    construct the tracer does not follow."""


@dataclass(frozen=True)
class Instrumented:
    """An instrumented program: ``code`` is a JavaScript arrow function taking ``HOOKS`` and
    returning ``{name: value}`` of the program's top-level declarations; ``sites`` the variable
    names each capture site passes, in order."""

    code: str
    sites: tuple[tuple[str, ...], ...]


@functools.lru_cache(maxsize=256)
def instrument(source: str) -> Instrumented:
    """The instrumented form of ``source`` (cached: a program's cases share it). Raises
    InstrumentError when the program cannot be traced."""
    if PREFIX in source:
        raise InstrumentError(
            f"the program uses {PREFIX!r}, a prefix reserved for the tracer's instrumentation"
        )
    odd = _ODD_LINE_BREAK.search(source)
    if odd is not None:
        raise InstrumentError(
            f"the program holds {odd.group()!r}, which JavaScript and Python's str.splitlines do not "
            "both count as one line break: its line numbers would be ambiguous"
        )
    src = source.encode("utf-8")
    tree = parser().parse(src)
    root = tree.root_node
    if root.has_error:
        raise InstrumentError("the program does not parse as JavaScript")
    rewriter = _Rewriter(src)
    body = rewriter.text(root)
    names = ",".join(f"{name}:{name}" for name in _top_level_names(root))
    code = f"(({','.join(HOOKS)})=>{{{body}\n;return {{__proto__:null,{names}}};}})"
    return Instrumented(code=code, sites=tuple(rewriter.sites))


def _top_level_names(root: Node) -> list[str]:
    """The names the program declares at its top level (functions, let/const/var bindings)."""
    names: list[str] = []
    for child in root.named_children:
        if child.type == "function_declaration":
            names.append(_name(child))
        elif child.type in ("lexical_declaration", "variable_declaration"):
            for declarator in child.named_children:
                if declarator.type == "variable_declarator":
                    names.extend(bound_names(field_node(declarator, "name")))
    return list(dict.fromkeys(names))


def _name(node: Node) -> str:
    return node_text(field_node(node, "name"))


def bound_names(pattern: Node) -> list[str]:
    """The names a binding pattern binds (an identifier, or an array/object destructuring)."""
    kind = pattern.type
    if kind in ("identifier", "shorthand_property_identifier_pattern"):
        return [node_text(pattern)]
    if kind == "pair_pattern":
        return bound_names(field_node(pattern, "value"))
    if kind in ("assignment_pattern", "object_assignment_pattern"):
        return bound_names(field_node(pattern, "left"))
    if kind in ("object_pattern", "array_pattern", "rest_pattern"):
        return [name for child in pattern.named_children for name in bound_names(child)]
    return []  # a member expression as a target (`for (o.k of xs)`), a comment: binds nothing


def parameters(function: Node) -> list[Node]:
    """The identifiers/patterns of a function's parameters."""
    single = function.child_by_field_name("parameter")  # `x => ...`
    if single is not None:
        return [single]
    return [p for p in field_node(function, "parameters").named_children if p.type != "comment"]


def function_name(function: Node) -> str:
    """A traced frame's ``func``: the function's name, else the name it is bound to where it is
    defined (``const g = () => {}``, ``g = function () {}``, ``{g: () => {}}``), else ``<anonymous>``."""
    name = function.child_by_field_name("name")
    if name is not None:
        return node_text(name)
    parent = function.parent
    if parent is not None:
        if parent.type == "variable_declarator" and field_node(parent, "name").type == "identifier":
            return _name(parent)
        if parent.type == "assignment_expression":
            left = field_node(parent, "left")
            if left.type == "identifier":
                return node_text(left)
            if left.type == "member_expression":
                return node_text(field_node(left, "property"))
        if parent.type == "pair":
            return node_text(field_node(parent, "key"))
    return "<anonymous>"


def _is_async(function: Node) -> bool:
    return any(child.type == "async" for child in function.children)


class _Frame:
    """The function being instrumented: its scopes, innermost last. A scope maps each name it
    declares to the byte offset of its declaration (None: a function declaration, never a state)."""

    def __init__(self, scope: dict[str, int | None]) -> None:
        self.scopes = [scope]


class _Rewriter:
    """Builds the instrumented text of a tree, node by node (``text``), and the capture sites."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.sites: list[tuple[str, ...]] = []
        self._site_ids: dict[tuple[str, ...], int] = {}
        self.frame: _Frame | None = None  # None outside functions (the program's top level)

    # --- text ---------------------------------------------------------------------------------

    def text(self, node: Node, replace: dict[int, str] | None = None) -> str:
        """The instrumented text of ``node``: its own text with each child instrumented, or
        replaced by ``replace[i]`` (i: the child's index)."""
        unsupported = _UNSUPPORTED.get(node.type)
        if unsupported is not None:
            raise _unsupported(unsupported, node)
        if node.child_count == 0:
            return self.src[node.start_byte : node.end_byte].decode("utf-8")
        parts: list[str] = []
        at = node.start_byte
        for i, child in enumerate(node.children):
            parts.append(self.src[at : child.start_byte].decode("utf-8"))
            parts.append(replace[i] if replace and i in replace else self.node(child))
            at = child.end_byte
        parts.append(self.src[at : node.end_byte].decode("utf-8"))
        return "".join(parts)

    def node(self, node: Node) -> str:
        """Dispatch: functions everywhere, statements inside functions."""
        kind = node.type
        if kind in _FUNCTIONS:
            return self.function(node)
        if self.frame is None:
            return self.text(node)
        if kind in _SIMPLE:
            return self.simple(node)
        handler = _HANDLERS.get(kind)
        return handler(self, node) if handler is not None else self.text(node)

    # --- scopes and sites ---------------------------------------------------------------------

    def visible(self, at: int) -> tuple[str, ...]:
        """The variables a capture at byte ``at`` passes: those whose innermost declaration in the
        frame precedes ``at`` (later ones are in their temporal dead zone, or not declared yet),
        function declarations left out, in declaration order."""
        assert self.frame is not None
        seen: set[str] = set()
        found: list[tuple[int, str]] = []
        for scope in reversed(self.frame.scopes):
            for name, offset in scope.items():
                if name in seen:
                    continue
                seen.add(name)
                if offset is not None and offset < at:
                    found.append((offset, name))
        return tuple(name for _, name in sorted(found))

    def site(self, at: int) -> tuple[int, str]:
        """A capture site at byte ``at``: its id and the JavaScript array of its variables."""
        names = self.visible(at)
        site = self._site_ids.get(names)
        if site is None:
            site = self._site_ids[names] = len(self.sites)
            self.sites.append(names)
        return site, f"[{','.join(names)}]"

    def capture(self, at: int) -> str:
        site, values = self.site(at)
        return f"$$evC({_FRAME},{site},{values});"

    def scoped(self, scope: dict[str, int | None], build: Callable[[], str]) -> str:
        """``build()`` with ``scope`` pushed on the frame's scopes."""
        assert self.frame is not None
        self.frame.scopes.append(scope)
        try:
            return build()
        finally:
            self.frame.scopes.pop()

    # --- functions ----------------------------------------------------------------------------

    def function(self, node: Node) -> str:
        """A function: a frame of its own whose body starts by creating its frame record."""
        if _is_async(node):
            raise _unsupported("an async function", node)
        body = field_node(node, "body")
        if body.type != "statement_block":  # an expression-bodied arrow: no statements, no frame
            outer, self.frame = self.frame, None
            try:
                return self.text(node)
            finally:
                self.frame = outer
        scope: dict[str, int | None] = {}
        for param in parameters(node):
            for name in bound_names(param):
                scope.setdefault(name, param.start_byte)
        _collect_vars(body, scope)
        _collect_lexical(body, scope)
        outer, self.frame = self.frame, _Frame(scope)
        try:
            site, values = self.site(body.start_byte)
            enter = f"const {_FRAME}=$$evE({_js_string(function_name(node))},{site},{values});"
            return self.text(node, {_index(node, "body"): self._body(body, enter)})
        finally:
            self.frame = outer

    def _body(self, body: Node, enter: str) -> str:
        """A function body: directives (``"use strict"``) first and untraced, then ``enter``."""
        statements = body.children[1:-1]  # between the braces
        parts = ["{"]
        at = body.start_byte + 1
        directives = True
        for child in statements:
            parts.append(self.src[at : child.start_byte].decode("utf-8"))
            if directives and not is_directive(child) and child.type != "comment":
                directives = False
                parts.append(enter)
            parts.append(self.text(child) if directives else self.node(child))
            at = child.end_byte
        if directives:
            parts.append(enter)
        parts.append(self.src[at : body.end_byte].decode("utf-8"))
        return "".join(parts)

    # --- statements ---------------------------------------------------------------------------

    def simple(self, node: Node) -> str:
        """A statement that is one step: ``$$evS`` before it; its changes captured after it (for
        ``return``/``throw``, after their expression, before leaving)."""
        step = f"$$evS({_FRAME},{node.start_point.row + 1});"
        kind = node.type
        if kind in ("return_statement", "throw_statement"):
            argument = next((c for c in node.named_children if c.type != "comment"), None)
            if argument is None:
                body = self.text(node)
            else:
                site, values = self.site(node.end_byte)
                index = node.children.index(argument)
                hooked = f"$$evR({_FRAME},{site},({self.node(argument)}),{values})"
                body = self.text(node, {index: hooked})
            statement = step + body + _semicolon(node)
        else:
            after = "" if kind in _CHANGES_NOTHING else self.capture(node.end_byte)
            statement = step + self.text(node) + _semicolon(node) + after
        return _braced(node, statement)

    def if_statement(self, node: Node) -> str:
        return self.text(node, {_index(node, "condition"): self.test(node, field_node(node, "condition"))})

    def while_statement(self, node: Node) -> str:
        return self.text(node, {_index(node, "condition"): self.test(node, field_node(node, "condition"))})

    def do_statement(self, node: Node) -> str:
        # `do {...} while (c)`: the test is the loop's step, at the line of `while`.
        keyword = next(c for c in node.children if c.type == "while")
        condition = field_node(node, "condition")
        test = self.test(keyword, condition, at=condition.start_byte)
        return self.text(node, {_index(node, "condition"): test})

    def test(self, header: Node, condition: Node, at: int | None = None) -> str:
        """A tested condition (``(c)``, parentheses included) as a step at ``header``'s line."""
        site, values = self.site(header.start_byte if at is None else at)
        line = header.start_point.row + 1
        return f"($$evS({_FRAME},{line}),$$evR({_FRAME},{site},{self.node(condition)},{values}))"

    def for_statement(self, node: Node) -> str:
        """``for (init; test; update)``: a step each time the test is evaluated (init and update
        run before it, so their changes are that step's)."""
        scope: dict[str, int | None] = {}
        init = field_node(node, "initializer")
        if init.type == "lexical_declaration":
            _declare(init, scope)
        line = node.start_point.row + 1

        def build() -> str:
            # The initializer is part of the header, not a statement of its own.
            replace: dict[int, str] = {_index(node, "initializer"): self.text(init)}
            for i, child in enumerate(node.children):
                if node.field_name_for_child(i) != "condition":
                    continue
                site, values = self.site(child.start_byte)
                if child.type == "empty_statement":  # no test: `for (;;)`
                    replace[i] = f"$$evS({_FRAME},{line}),$$evR({_FRAME},{site},true,{values});"
                elif child.type != ";":
                    hooked = self.node(child)
                    replace[i] = f"$$evS({_FRAME},{line}),$$evR({_FRAME},{site},({hooked}),{values})"
            return self.text(node, replace)

        return self.scoped(scope, build)

    def for_in_statement(self, node: Node) -> str:
        """``for (x of xs)`` / ``for (k in o)``: a step before each ``next()`` of the iteration
        (the last one finds it done), its changes captured at the start of the body. ``for…in``
        becomes a ``for…of`` over the keys ``$$evK`` yields (the keys ``for…in`` visits)."""
        operator = field_node(node, "operator")
        right = field_node(node, "right")
        body = field_node(node, "body")
        left = field_node(node, "left")
        kind = node.child_by_field_name("kind")
        scope: dict[str, int | None] = {}
        if kind is not None and kind.type in ("let", "const"):
            scope = dict.fromkeys(bound_names(left), left.start_byte)
        line = node.start_point.row + 1
        hook = "$$evI" if operator.type == "of" else "$$evK"

        def build() -> str:
            capture = self.capture(body.start_byte)
            inner = self.node(body)
            inner = inner[1:] if body.type == "statement_block" else inner + "}"
            inner = "{" + capture + inner
            iterable = f"{hook}({_FRAME},{line},($$evS({_FRAME},{line}),{self.node(right)}))"
            return self.text(
                node,
                {
                    node.children.index(operator): "of",
                    node.children.index(right): iterable,
                    node.children.index(body): inner,
                },
            )

        return self.scoped(scope, build)

    def try_statement(self, node: Node) -> str:
        """``try`` is a step (as in Python); ``catch`` is a step that binds its parameter;
        ``finally`` is not."""
        step = f"$$evS({_FRAME},{node.start_point.row + 1});"
        return _braced(node, step + self.text(node))

    def catch_clause(self, node: Node) -> str:
        param = node.child_by_field_name("parameter")
        body = field_node(node, "body")
        # The caught value is checked before the body: a pattern (or no parameter) becomes a
        # parameter of our own, and the pattern is bound from it after the check.
        caught = node_text(param) if param is not None and param.type == "identifier" else _CAUGHT
        pending = self._pending(node, caught)
        scope: dict[str, int | None] = {}
        unpack = ""
        if param is not None:
            scope = dict.fromkeys(bound_names(param), param.start_byte)
            if param.type != "identifier":
                unpack = f"let {self.text(param)}={_CAUGHT};"

        def build() -> str:
            step = f"$$evS({_FRAME},{node.start_point.row + 1});"
            inner = self.node(body)
            return "{" + pending + step + unpack + self.capture(body.start_byte) + inner[1:]

        return f"catch ({caught}) {self.scoped(scope, build)}"

    def finally_clause(self, node: Node) -> str:
        body = field_node(node, "body")
        inner = self.node(body)
        return self.text(node, {node.children.index(body): "{" + self._pending(node, "void 0") + inner[1:]})

    def _pending(self, clause: Node, error: str) -> str:
        """At a ``catch``/``finally``: rethrow the stop sentinel; capture the interrupted step."""
        site, values = self.site(clause.start_byte)
        return f"$$evX({_FRAME},{error},{site},{values});"

    def statement_block(self, node: Node) -> str:
        scope: dict[str, int | None] = {}
        _collect_lexical(node, scope)
        return self.scoped(scope, lambda: self.text(node))


_HANDLERS: dict[str, Callable[[_Rewriter, Node], str]] = {
    "if_statement": _Rewriter.if_statement,
    "while_statement": _Rewriter.while_statement,
    "do_statement": _Rewriter.do_statement,
    "for_statement": _Rewriter.for_statement,
    "for_in_statement": _Rewriter.for_in_statement,
    "try_statement": _Rewriter.try_statement,
    "catch_clause": _Rewriter.catch_clause,
    "finally_clause": _Rewriter.finally_clause,
    "statement_block": _Rewriter.statement_block,
}


def _unsupported(what: str, node: Node) -> InstrumentError:
    return InstrumentError(f"the tracer does not follow {what} (line {node.start_point.row + 1})")


def _index(node: Node, field: str) -> int:
    return next(i for i in range(node.child_count) if node.field_name_for_child(i) == field)


def is_directive(node: Node) -> bool:
    """A directive such as ``"use strict";``: a statement that is a lone string (never a step)."""
    named = [c for c in node.named_children if c.type != "comment"]
    return node.type == "expression_statement" and len(named) == 1 and named[0].type == "string"


def _semicolon(node: Node) -> str:
    """``;`` when the statement ends without one (automatic semicolon insertion)."""
    return "" if node.children and node.children[-1].type == ";" else ";"


def _braced(node: Node, statement: str) -> str:
    """``statement`` (now several statements) in braces where the original was a body
    (``if (c) x++;``), as is where it sat in a list."""
    parent = node.parent
    if parent is not None and parent.type in _STATEMENT_LISTS:
        return statement
    return "{" + statement + "}"


def _collect_vars(node: Node, scope: dict[str, int | None]) -> None:
    """``var`` names declared anywhere in a function body (not in nested functions), each at its
    first declaration."""
    for child in node.named_children:
        if child.type in _FUNCTIONS:
            continue
        if child.type == "variable_declaration":
            for declarator in child.named_children:
                if declarator.type == "variable_declarator":
                    name = field_node(declarator, "name")
                    for bound in bound_names(name):
                        scope.setdefault(bound, name.start_byte)
        elif child.type == "for_in_statement":
            kind = child.child_by_field_name("kind")
            if kind is not None and kind.type == "var":
                left = field_node(child, "left")
                for bound in bound_names(left):
                    scope.setdefault(bound, left.start_byte)
        _collect_vars(child, scope)


def _collect_lexical(block: Node, scope: dict[str, int | None]) -> None:
    """The names a block's own statements declare with ``let``/``const`` (at their declaration)
    and function declarations (None: they shadow, but are never states)."""
    for child in block.named_children:
        if child.type == "lexical_declaration":
            _declare(child, scope)
        elif child.type == "function_declaration":
            scope[_name(child)] = None


def _declare(declaration: Node, scope: dict[str, int | None]) -> None:
    """The names a ``let``/``const`` declaration binds, each at its declarator's name."""
    for declarator in declaration.named_children:
        if declarator.type == "variable_declarator":
            name = field_node(declarator, "name")
            for bound in bound_names(name):
                scope[bound] = name.start_byte


def _js_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
