"""Program normal forms for dedup and decontamination.

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


class _Renamer(ast.NodeTransformer):
    """Rename identifiers in order of appearance; optionally abstract literals to their type."""

    def __init__(self, abstract_literals: bool) -> None:
        self.names: dict[str, str] = {}
        self.abstract = abstract_literals

    def _new(self, name: str) -> str:
        if name in BUILTINS and name not in self.names:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self._new(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._new(node.name)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self.abstract:
            node.value = type(node.value).__name__
        return node


def _key(node: ast.AST, abstract_literals: bool) -> str:
    renamed = _Renamer(abstract_literals).visit(ast.parse(ast.unparse(node)))
    return hashlib.sha256(ast.dump(renamed, annotate_fields=False).encode()).hexdigest()[:16]


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
