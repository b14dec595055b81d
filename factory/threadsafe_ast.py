"""``ast.parse`` that several threads may call at once.

CPython 3.11 keeps the depth counter of its AST object constructor in interpreter-wide state.
Building the AST objects of one parse may run other Python code (a garbage collection calling
finalizers), and with it another thread, whose own parse then moves the same counter: one of the
two fails with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905
fixed one cause, not this one). The scorer judges input and codegen items in a thread pool, and
every parse those threads make (the answer's ``assert`` line, literals, argument lists) goes
through ``parse``, which holds one lock: parsing holds the GIL anyway, so the lock costs nothing.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_LOCK = threading.Lock()


@overload
def parse(source: str, mode: Literal["eval"]) -> ast.Expression: ...
@overload
def parse(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
def parse(source: str, mode: Literal["exec", "eval"] = "exec") -> ast.Expression | ast.Module:
    """``ast.parse(source, mode=mode)``, one thread at a time."""
    with _LOCK:
        tree = ast.parse(source, mode=mode)
    assert isinstance(tree, ast.Expression | ast.Module)  # what the two modes give
    return tree
