"""What a trusted job may leave behind in its worker's process, and how the worker tells.

A program that imports a module, or reaches past its own namespace (a dunder attribute such as
``__subclasses__``, or ``eval``, ``getattr``...), can change state that a later job of the same
worker would see: a module's globals (``math.pi = 3``, ``string.digits = 'x'``), the decimal
context, the working directory, the umask, the environment, the int digit limit, the thread
switch interval, or threads left running. Before such a job the worker takes a ``Snapshot`` of
that state; when the job changed it, the worker retires after answering and the pool replaces it
(the job's own answer stands). A program that does neither cannot reach any of it and skips the
check, so the worker's usual jobs pay nothing.

A module's globals are compared by identity (a rebound name), for the modules the program
imports and the modules those refer to; a program that reaches further (a dunder attribute,
``eval``, or an import of ``sys``, ``os``, ``importlib``...) has every loaded module compared. In-place
changes to a mutable module global (``sys.path.append``) are not seen, except the environment.
"""

from __future__ import annotations

import decimal
import dis
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType, ModuleType
from typing import Any

#: Modules whose globals hold no way to other modules' state: importing them alone limits the check
#: to them (and the modules they refer to).
PLAIN_MODULES = frozenset(
    {
        "math", "cmath", "string", "re", "collections", "itertools", "functools", "operator",
        "heapq", "bisect", "fractions", "statistics", "random", "copy", "json", "datetime",
        "decimal", "textwrap", "unicodedata", "typing", "dataclasses", "enum", "array",
    }
)  # fmt: skip
#: Built-in names that reach past the program's namespace.
REACHING_BUILTINS = frozenset(
    {"eval", "exec", "compile", "globals", "vars", "getattr", "setattr", "delattr", "open", "breakpoint"}
)
_EVERYTHING = None  # ``reach`` of a program whose every loaded module is compared


def reach(source: str, code: CodeType) -> frozenset[str] | None:
    """The modules a program (its source and code) imports (an empty set: none, and it reaches
    nothing), or None when it may reach any module's state (see the module docstring)."""
    if "import" not in source and "__" not in source and not any(b in source for b in REACHING_BUILTINS):
        return frozenset()  # (reading the text first saves disassembling nearly every program)
    imported: set[str] = set()
    for unit in _code_objects(code):
        if any(name.startswith("__") or name in REACHING_BUILTINS for name in unit.co_names):
            return _EVERYTHING
        for instruction in dis.get_instructions(unit):
            if instruction.opname == "IMPORT_NAME":
                imported.add(str(instruction.argval))
    if any(name.split(".")[0] not in PLAIN_MODULES for name in imported):
        return _EVERYTHING
    return frozenset(imported)


def _code_objects(code: CodeType) -> list[CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found += _code_objects(const)
    return found


class Snapshot:
    """The process state a job could change, taken before it (``changed`` compares after)."""

    def __init__(self, modules: frozenset[str] | None) -> None:
        # Plain modules reach no process state but the decimal context (see PLAIN_MODULES).
        if modules is None:
            self.state: Callable[[], dict[str, Any]] = _process_state
        elif "decimal" in modules:
            self.state = _decimal_state
        else:
            self.state = dict
        self.process = self.state()
        self.modules = {name: (m, dict(vars(m))) for name, m in _watched(modules).items()}

    def changed(self) -> str | None:
        """What the job changed (a short description), or None."""
        now = self.state()
        for key, before in self.process.items():
            if now[key] != before:
                return key
        for name, (module, before) in self.modules.items():
            after = vars(module)
            if len(after) != len(before) or any(after.get(k, before) is not v for k, v in before.items()):
                return f"module {name}"
        return None


def _watched(modules: frozenset[str] | None) -> dict[str, ModuleType]:
    """The loaded modules to compare: ``modules`` (and the modules they refer to), or all."""
    if modules is None:
        return {name: m for name, m in list(sys.modules.items()) if isinstance(m, ModuleType)}
    watched: dict[str, ModuleType] = {}
    for name in modules:
        module = sys.modules.get(name)
        if not isinstance(module, ModuleType):
            continue  # not imported yet: the job's import makes it fresh
        watched[name] = module
        for value in vars(module).values():
            if isinstance(value, ModuleType):
                watched[value.__name__] = value
    return watched


def _process_state() -> dict[str, Any]:
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError:  # the directory was removed
        cwd = None
    return {
        "threads": _thread_count(),
        "working directory": cwd,
        "umask": umask,
        "environment": dict(os.environ),
        "int digit limit": sys.get_int_max_str_digits(),
        "switch interval": sys.getswitchinterval(),
        **_decimal_state(),
    }


def _decimal_state() -> dict[str, Any]:
    return {"decimal context": f"{decimal.getcontext()!r} {decimal.DefaultContext!r}"}


def _thread_count() -> int:
    """The process's threads (the kernel's count on Linux: also those ``threading`` never saw)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()
