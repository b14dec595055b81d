"""JavaScript's ``normalize`` facet: program normal forms for dedup and decontamination, on the
tree-sitter-javascript tree, with the meanings of Python's (``factory.release.normalize``).

Both views are blind to formatting, comments and optional semicolons; literals are kept (a string
or a number by its value: ``'a'`` is ``"a"``, ``0x10`` is ``16``):

- ``token_stream``: the program's tokens with every identifier that is not a global (``Math``,
  ``parseInt``: ``code.GLOBALS`` and capitalised names) replaced by ``_``; property names are kept.
- ``program_key``/``ast_keys``: hashes of the tree with identifiers renamed in order of appearance
  (``v0``, ``v1``, ...; globals kept), one for the whole program and one per function. Equal keys
  mean the same code up to renaming.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from tree_sitter import Node

from factory.languages.javascript.code import GLOBALS
from factory.languages.javascript.values import literal, literal_value, parser
from factory.languages.tree import text, walk

#: Identifier node kinds that name a variable, a function or a label (renamed); a property name
#: (``property_identifier``) is kept, as Python's attribute names are.
_NAMES = frozenset(
    {
        "identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "statement_identifier",
    }
)
_SKIPPED = frozenset({"comment", ";"})
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function", "method_definition"})


def parse(source: str) -> Node | None:
    """The program's tree-sitter root node, or None when the source does not parse."""
    root = parser().parse(source.encode("utf-8")).root_node
    return None if root.has_error else root


def _is_global(name: str) -> bool:
    return name in GLOBALS or name[:1].isupper()


def _literal(node: Node) -> str:
    """A string's or a number's canonical literal (its text when the value model refuses it)."""
    raw = text(node)
    try:
        return literal(literal_value(raw))
    except (SyntaxError, ValueError, TypeError):
        return raw


def _tokens(root: Node) -> Iterator[Node]:
    """The leaves under ``root`` in source order (a string or a number is one), without comments
    and semicolons."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _SKIPPED:
            continue
        if node.type in ("string", "number") or not node.children:
            yield node
        else:
            stack.extend(reversed(node.children))


def token_stream(tree: Node) -> list[str]:
    """Tokens of the program, local identifiers replaced by ``_``, literals kept."""
    out = []
    for token in _tokens(tree):
        if token.type in ("string", "number"):
            out.append(_literal(token))
        elif token.type in _NAMES:
            out.append(text(token) if _is_global(text(token)) else "_")
        else:
            out.append(text(token))
    return out


def _key(root: Node, abstract_literals: bool) -> str:
    """The hash of ``root``'s tree (node kinds, nesting and tokens) with names renamed in order of
    appearance and, optionally, literals abstracted to their kind."""
    names: dict[str, str] = {}
    parts: list[str] = []
    stack: list[Node | None] = [root]
    while stack:
        node = stack.pop()
        if node is None:
            parts.append(")")
            continue
        kind = node.type
        if kind in _SKIPPED:
            continue
        if kind in ("string", "number"):
            parts.append(f"{kind}:{kind if abstract_literals else _literal(node)}")
        elif not node.children:
            token = text(node)
            if kind in _NAMES and not (_is_global(token) and token not in names):
                token = names.setdefault(token, f"v{len(names)}")
            parts.append(f"{kind}:{json.dumps(token)}")
        else:
            parts.append(f"{kind}(")
            stack.append(None)
            stack.extend(reversed(node.children))
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()[:16]


def program_key(tree: Node, literals: str = "keep") -> str:
    """The renamed-tree hash of the whole program (the near-duplicate key)."""
    return _key(tree, literals == "abstract")


def ast_keys(tree: Node, literals: str = "keep") -> set[str]:
    """The renamed-tree hashes of the whole program and of each function in it."""
    abstract = literals == "abstract"
    return {_key(tree, abstract)} | {_key(n, abstract) for n in walk(tree) if n.type in _FUNCTIONS}
