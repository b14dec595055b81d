"""Program normal forms for dedup and decontamination: Python's ``Language.normalize``
(docs/languages.md; the assemble stage still imports this module itself).

Two views of a program, both blind to formatting, comments and docstrings:

- ``token_stream``: the tokens of the canonical source (``ast.unparse``) with every identifier
  that is not a builtin, a keyword or an attribute name replaced by ``_``; literals are kept.
  Its n-grams survive renaming, small edits and reordering of the surrounding code.
- ``ast_keys``: hashes of the AST with identifiers renamed in order of appearance (``v0``, ``v1``,
  ...), one for the whole program and one per function; literals are kept, or abstracted to their
  type with ``literals="abstract"``. Equal keys mean the same code up to renaming.

``fingerprint`` gives both of a source at once (its ``program_key`` written once, not again for
its ``ast_keys``), as plain data: processes compute them for many programs.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import keyword
import tokenize
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

BUILTINS = frozenset(dir(builtins))
_SKIP = {tokenize.ENCODING, tokenize.ENDMARKER, tokenize.NL, tokenize.COMMENT}
_MARK = {tokenize.NEWLINE: "<nl>", tokenize.INDENT: "<in>", tokenize.DEDENT: "<de>"}


def parse(source: str) -> ast.Module | None:
    """The module without docstrings, or None when the source does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. "\w" in benchmark strings
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in _scopes(tree):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


_SCOPE = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_BLOCK = ast.stmt | ast.excepthandler | ast.match_case  # what a statement list's items are


def _scopes(tree: ast.Module) -> Iterator[_SCOPE]:
    """The module and every function and class in it (the nodes that may have a docstring).

    Only statements are visited: a definition is a statement, and no expression holds one (an
    ``ast.walk`` of every node took a quarter of ``parse``'s time)."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, _SCOPE):
            yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], _BLOCK):
                todo.extend(reversed(value))


def token_stream(tree: ast.Module) -> list[str]:
    """Tokens of the canonical source, local identifiers replaced by ``_``, literals kept."""
    out: list[str] = []
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(ast.unparse(tree)).readline):
        if tok.type in _SKIP:
            continue
        text = _MARK.get(tok.type, tok.string)
        if tok.type == tokenize.NAME and not (keyword.iskeyword(text) or text in BUILTINS or previous == "."):
            text = "_"
        out.append(text)
        previous = tok.string
    return out


class _KeyWriter:
    """The text of an AST with identifiers renamed in order of appearance (builtins kept unless
    the program rebinds them) and, optionally, literals abstracted to their type name.

    It writes the renamed form directly, without copying the tree (a copy through
    ``ast.unparse`` and ``ast.parse`` cost most of the assemble stage's time). Renamed: names,
    parameters (their annotations dropped), function and class names (return annotations
    dropped), ``global``/``nonlocal`` names; attribute and keyword names are kept.

    The text is ``Type(field,...,)`` with a list as ``[item,...,]`` and any other value as its
    ``repr``. What to do with each field of a node type is worked out once per type
    (``_fields``): the writer runs on every node of every program and benchmark program, and
    this halved its time.
    """

    def __init__(self, abstract_literals: bool) -> None:
        self.names: dict[str, str] = {}
        self.abstract = abstract_literals
        self.parts: list[str] = []

    def _new(self, name: str) -> str:
        if name in BUILTINS and name not in self.names:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def write(self, node: ast.AST) -> None:
        out = self.parts
        head, fields = _fields(type(node))
        out.append(head)
        for name, how in fields:
            value: Any = getattr(node, name, _MISSING)
            if value is _MISSING:
                continue
            if how is _DROP:
                value = None
            elif how is _RENAME:
                value = [self._new(v) for v in value] if isinstance(value, list) else self._new(value)
            elif how is _LITERAL and self.abstract:
                value = type(value).__name__
            self._write_value(value)
            out.append(",")
        out.append(")")

    def _write_value(self, value: object) -> None:
        """A field's value: a node, a list as ``[item,...,]``, anything else as its ``repr``."""
        if isinstance(value, ast.AST):
            self.write(value)
        elif isinstance(value, list):
            out = self.parts
            out.append("[")
            for item in value:
                self._write_value(item)
                out.append(",")
            out.append("]")
        else:
            self.parts.append(repr(value))


_MISSING = object()
_KEEP, _DROP, _RENAME, _LITERAL = "keep", "drop", "rename", "literal"
_RENAMED: dict[type, tuple[str, ...]] = {
    ast.Name: ("id",),
    ast.arg: ("arg",),
    ast.FunctionDef: ("name",),
    ast.AsyncFunctionDef: ("name",),
    ast.ClassDef: ("name",),
    ast.Global: ("names",),
    ast.Nonlocal: ("names",),
}
_DROPPED: dict[type, tuple[str, ...]] = {
    ast.arg: ("annotation", "type_comment"),
    ast.FunctionDef: ("returns", "type_comment"),
    ast.AsyncFunctionDef: ("returns", "type_comment"),
}


_FIELDS: dict[type[ast.AST], tuple[str, tuple[tuple[str, str], ...]]] = {}


def _fields(node_type: type[ast.AST]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The head of a node type's text (``Name(``) and, per field, what ``_KeyWriter`` does with it
    (worked out at the type's first node)."""
    known = _FIELDS.get(node_type)
    if known is not None:
        return known

    def how(name: str) -> str:
        if name in _DROPPED.get(node_type, ()):
            return _DROP
        if name in _RENAMED.get(node_type, ()):
            return _RENAME
        return _LITERAL if node_type is ast.Constant and name == "value" else _KEEP

    known = _FIELDS[node_type] = (f"{node_type.__name__}(", tuple((n, how(n)) for n in node_type._fields))
    return known


def _key(node: ast.AST, abstract_literals: bool) -> str:
    writer = _KeyWriter(abstract_literals)
    writer.write(node)
    return hashlib.sha256("".join(writer.parts).encode()).hexdigest()[:16]


def program_key(tree: ast.Module, literals: str = "keep") -> str:
    """The renamed-AST hash of the whole program (the near-duplicate key)."""
    return _key(tree, literals == "abstract")


def ast_keys(tree: ast.Module, literals: str = "keep") -> set[str]:
    """The renamed-AST hashes of the whole program and of each function in it."""
    abstract = literals == "abstract"
    return {_key(tree, abstract), *_function_keys(tree, abstract)}


def _function_keys(tree: ast.Module, abstract_literals: bool) -> set[str]:
    return {
        _key(node, abstract_literals)
        for node in _scopes(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


class Fingerprint(NamedTuple):
    """What dedup and decontamination read of one program."""

    key: str  # program_key
    keys: set[str]  # ast_keys: ``key`` and each function's
    grams: set[int]  # ngrams of the token_stream


def fingerprint(source: str, n: int, literals: str = "keep") -> Fingerprint | None:
    """The ``Fingerprint`` (n-grams of ``n`` tokens) of a source, None when it does not parse."""
    tree = parse(source)
    if tree is None:
        return None
    abstract = literals == "abstract"
    key = _key(tree, abstract)  # written once, for ``key`` and ``keys``
    return Fingerprint(key, {key, *_function_keys(tree, abstract)}, ngrams(token_stream(tree), n))


def ngrams(tokens: list[str], n: int) -> set[int]:
    """The distinct n-grams of a token stream, as 64-bit hashes (a stream shorter than n gives one)."""
    if not tokens:
        return set()
    spans = [tokens] if len(tokens) <= n else [tokens[i : i + n] for i in range(len(tokens) - n + 1)]
    return {int.from_bytes(hashlib.blake2b("\x1f".join(s).encode(), digest_size=8).digest()) for s in spans}
