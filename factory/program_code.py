"""Compiling a program: one way for every worker, and once in the parent for all of them.

Every worker (each hash seed's, the tracer's) turns a program's source into a code object the
same way: ``program_code``. The parent of a worker pool may compile a program once and send the
code object's ``marshal`` bytes with its jobs (``portable_code``); a worker then loads it in a
few microseconds instead of compiling again (about 30 µs for a CRUXEval program, once per
program in each hash seed's worker). Loading gives the very code object that compiling in the
worker would give, except for frozenset constants (``x in {"a", "b"}``): their iteration order
follows the hash seed of the process that builds them, so such programs are never sent compiled.

Compiling runs none of the program's code: it is safe in the parent. Constant folding is bounded
by CPython (no huge constants), and a source too deeply nested fails with an error, caught here.
"""

from __future__ import annotations

import ast
import marshal
import warnings
from types import CodeType

PROGRAM_FILENAME = "<program>"


def program_code(source: str | ast.Module, shipped: bytes | None = None) -> CodeType:
    """The code object of a program (its source, or its parsed tree): loaded from ``shipped``
    (``portable_code`` of the same source) when that holds one, else compiled here. Raises
    SyntaxError (ValueError for null bytes) as ``compile`` does."""
    if type(shipped) is bytes:
        try:
            code = marshal.loads(shipped)
        except (ValueError, EOFError, TypeError):
            code = None
        if type(code) is CodeType:
            return code
    # dont_inherit: the caller's `from __future__ import annotations` must not leak into it;
    # optimize=0: asserts stay, whatever the interpreter's -O (the parent's and the workers'
    # compiles must agree).
    return compile(source, PROGRAM_FILENAME, "exec", dont_inherit=True, optimize=0)


def portable_code(source: str) -> bytes | None:
    """``program_code(source)`` as marshal bytes to send to workers; None when the source does
    not compile (the worker compiles it and reports the error) or holds a frozenset constant."""
    try:
        with warnings.catch_warnings():
            # A compile-time warning (`x is 'a'`, an invalid escape) is no business of the
            # parent's console: the workers, which compiled before, send theirs nowhere.
            warnings.simplefilter("ignore")
            code = program_code(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    if _has_frozenset(code.co_consts):
        return None
    return marshal.dumps(code)


def _has_frozenset(consts: tuple[object, ...]) -> bool:
    for const in consts:
        if isinstance(const, frozenset):
            return True
        if isinstance(const, CodeType) and _has_frozenset(const.co_consts):
            return True
        if isinstance(const, tuple) and _has_frozenset(const):
            return True
    return False
