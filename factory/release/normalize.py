"""Program normal forms for dedup and decontamination: Python's ``Language.normalize``
(docs/languages.md; the assemble stage still imports this module itself).

Two views of a program, both blind to formatting, comments and docstrings:

- ``token_stream``: the tokens of the canonical source (``ast.unparse``) with every identifier
  that is not a builtin, a keyword or an attribute name replaced by ``_``; literals are kept.
  Its n-grams survive renaming, small edits and reordering of the surrounding code.
- ``ast_keys``: hashes of the AST with identifiers renamed in order of appearance (``v0``, ``v1``,
  ...), one for the whole program and one per function; literals are kept, or abstracted to their
  type with ``literals="abstract"``. Equal keys mean the same code up to renaming.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import keyword
import tokenize
import warnings

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
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


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
    """

    def __init__(self, abstract_literals: bool) -> None:
        self.names: dict[str, str] = {}
        self.abstract = abstract_literals
        self.parts: list[str] = []

    def _new(self, name: str) -> str:
        if name in BUILTINS and name not in self.names:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def write(self, node: object) -> None:
        out = self.parts
        if isinstance(node, list):
            out.append("[")
            for item in node:
                self.write(item)
                out.append(",")
            out.append("]")
            return
        if not isinstance(node, ast.AST):
            out.append(repr(node))
            return
        out.append(type(node).__name__)
        out.append("(")
        renamed = _RENAMED.get(type(node), ())
        for name, value in ast.iter_fields(node):
            if name in _DROPPED.get(type(node), ()):
                value = None
            elif name in renamed:
                value = [self._new(v) for v in value] if isinstance(value, list) else self._new(value)
            elif isinstance(node, ast.Constant) and name == "value" and self.abstract:
                value = type(value).__name__
            self.write(value)
            out.append(",")
        out.append(")")


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
    keys = {_key(tree, abstract)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            keys.add(_key(node, abstract))
    return keys


def ngrams(tokens: list[str], n: int) -> set[int]:
    """The distinct n-grams of a token stream, as 64-bit hashes (a stream shorter than n gives one)."""
    if not tokens:
        return set()
    spans = [tokens] if len(tokens) <= n else [tokens[i : i + n] for i in range(len(tokens) - n + 1)]
    return {int.from_bytes(hashlib.blake2b("\x1f".join(s).encode(), digest_size=8).digest()) for s in spans}
