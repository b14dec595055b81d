"""The code each DVC stage runs, derived statically from its ``cmd`` (used by ``test_dvc_deps.py``).

A stage's **code closure** is the set of this project's code files (Python, and the JavaScript its
node workers run) its command can execute:

- ``execverify <command> …``: the typer command function in ``factory/cli/`` and the project
  modules it imports (in its body, or at the top of its CLI module for the names it uses, or through
  the CLI helpers it calls); ``python -m factory.x`` and ``python path/to/script.py``: that module.
- then every module those import, transitively: every ``import``/``from … import`` anywhere in a
  module (top level and inside functions; relative imports resolved; the ``__init__`` of every
  package on the way), except under ``if TYPE_CHECKING:``; a string constant that names a project
  module (a job kind ``"factory.trace.tracer:trace_job"``, the ``"factory.sandbox.worker"`` of a
  ``python -m`` argv); and a ``"name.py"`` constant naming a file beside its module (a script the
  module starts; a script's bare imports resolve to the files beside it, as its ``sys.path[0]``);
  a ``"name.js"`` or ``"name.js:function"`` constant naming a JavaScript file beside its module (the
  node worker's script, a job kind of it), and the files a ``.js`` file ``require``s (``./name.js``);
  and a call ``<language>.facet("name")`` (``factory.languages.base.Language.facet``): every
  language's ``factory/languages/<language>/name.py``, the module that call imports by its name.

The CLI package's own files (``factory/cli/**``) are never in a closure: a stage depends on the
stage code, not on the command-line wrapper. Nothing is imported: the code is only parsed.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DVC_FILES = ("dvc.yaml", "train/dvc.yaml")
PACKAGE = "factory"  # the project's importable package (train/ holds scripts, not a package)
CLI = "factory/cli"
DATA_FOLDERS = ("data", "grammars")  # deps under these are data, never code
MODULE_STRING = re.compile(r"(factory(?:\.\w+)+)(?::[\w.]+)?")
JS_FILE_STRING = re.compile(r"([\w-]+\.js)(?::\w+)?")  # "worker.js", a job kind "tracer.js:traceJob"
JS_REQUIRE = re.compile(r"""require\(\s*['"]\./([\w-]+\.js)['"]\s*\)""")
LANGUAGES = "factory/languages"  # a language's facets: factory/languages/<language>/<facet>.py


@dataclass(frozen=True)
class Stage:
    """One stage of a dvc.yaml: its name, its commands and its deps/outs as repository paths."""

    name: str
    dvc_file: str
    cmds: tuple[str, ...]
    deps: tuple[str, ...]
    outs: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.name} ({self.dvc_file})"


def load_stages(dvc_file: Path, folder: str | None = None) -> list[Stage]:
    """The stages of ``dvc_file``; ``folder`` is where it lies in the repository (default: its
    place under ``REPO``), against which its ``wdir`` and paths are resolved."""
    if folder is None:
        folder = dvc_file.resolve().parent.relative_to(REPO).as_posix()
    label = f"{folder}/{dvc_file.name}" if folder not in ("", ".") else dvc_file.name
    stages = []
    for name, spec in (yaml.safe_load(dvc_file.read_text()) or {}).get("stages", {}).items():
        wdir = os.path.join(folder, spec.get("wdir", "."))
        cmd = spec["cmd"]
        stages.append(
            Stage(
                name=name,
                dvc_file=label,
                cmds=tuple([cmd] if isinstance(cmd, str) else cmd),
                deps=tuple(repo_path(wdir, d) for d in spec.get("deps", [])),
                outs=tuple(
                    repo_path(wdir, o)
                    for key in ("outs", "metrics", "plots")
                    for entry in spec.get(key, [])
                    for o in (entry if isinstance(entry, dict) else [entry])
                ),
            )
        )
    return stages


def repo_path(wdir: str, path: str) -> str:
    """``path`` of a dvc file, given relative to ``wdir``, as a path from the repository root."""
    return Path(os.path.normpath(os.path.join(wdir, path))).as_posix()


def covers(dep: str, path: str) -> bool:
    """A dep covers a file when it is that file or a folder above it."""
    return path == dep or path.startswith(dep.rstrip("/") + "/")


@dataclass
class _Parsed:
    path: str
    tree: ast.Module
    module: str | None  # the dotted name, None for a script outside the package


@dataclass
class Project:
    """This project's Python files, parsed on demand; paths are relative to ``root``."""

    root: Path = REPO
    _parsed: dict[str, _Parsed] = field(default_factory=dict)
    _lazy: set[tuple[str, str]] = field(default_factory=set)
    _edges: dict[tuple[str, bool], list[tuple[str, bool]]] = field(default_factory=dict)
    _bindings: dict[str, dict[str, Any]] = field(default_factory=dict)

    # -- files and modules ---------------------------------------------------------------------
    def module_file(self, module: str) -> str | None:
        """``factory/x/y.py`` or ``factory/x/y/__init__.py`` for ``factory.x.y``; None if neither."""
        if module.split(".")[0] != PACKAGE:
            return None
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if (self.root / candidate).is_file():
                return candidate
        return None

    def module_files(self, module: str) -> list[str]:
        """The files importing ``module`` executes: each package ``__init__`` on the way, then it."""
        parts = module.split(".")
        found = (self.module_file(".".join(parts[:n])) for n in range(1, len(parts) + 1))
        return [f for f in found if f is not None]

    def bindings(self, path: str) -> dict[str, Any]:
        """The names the top level of ``path`` binds (see ``_module_bindings``)."""
        if path not in self._bindings:
            self._bindings[path] = _module_bindings(self.parse(path))
        return self._bindings[path]

    def parse(self, path: str) -> _Parsed:
        if path not in self._parsed:
            tree = ast.parse((self.root / path).read_text(encoding="utf-8"), filename=path)
            module = None
            if path.split("/")[0] == PACKAGE:
                module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            self._parsed[path] = _Parsed(path, tree, module)
        return self._parsed[path]

    # -- what one file reaches ---------------------------------------------------------------------
    def reached(
        self, path: str, script: bool, nodes: Iterable[ast.AST] | None = None
    ) -> Iterator[tuple[str, bool]]:
        """(file, runs as a script) for each project file that ``path`` (or only ``nodes`` of it)
        imports or names."""
        if path.endswith(".js"):
            yield from self._required(path)
            return
        parsed = self.parse(path)
        folder = str(Path(path).parent)
        if nodes is None:  # a module-level __getattr__ runs only for a name that needs it
            nodes = [n for n in parsed.tree.body if _name_of(n) != "__getattr__"]
        for node in _walk(nodes):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield from self._imported(alias.name, folder, script)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, parsed)
                yield from self._imported(base, folder, script and node.level == 0)
                for alias in node.names:
                    yield from self.attribute(base, alias.name)
            elif _facet_call(node):
                assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.Constant)
                name = node.args[0].value
                for facet in sorted((self.root / LANGUAGES).glob(f"*/{name}.py")):
                    yield facet.relative_to(self.root).as_posix(), False
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                match = MODULE_STRING.fullmatch(node.value)
                if match and self.module_file(match.group(1)):
                    yield from ((f, False) for f in self.module_files(match.group(1)))
                elif node.value.endswith(".py") and "/" not in node.value:
                    sibling = f"{folder}/{node.value}"
                    if (self.root / sibling).is_file():
                        yield sibling, True
                elif js := JS_FILE_STRING.fullmatch(node.value):
                    sibling = f"{folder}/{js.group(1)}"
                    if (self.root / sibling).is_file():
                        yield sibling, False

    def _required(self, path: str) -> Iterator[tuple[str, bool]]:
        """The project's JavaScript files a ``.js`` file loads (``require('./name.js')``)."""
        folder = str(Path(path).parent)
        for name in JS_REQUIRE.findall((self.root / path).read_text(encoding="utf-8")):
            if (self.root / folder / name).is_file():
                yield f"{folder}/{name}", False

    def attribute(self, module: str, name: str) -> Iterator[tuple[str, bool]]:
        """What ``from module import name`` reaches beyond ``module``: the submodule ``name``, or
        what the module-level ``__getattr__`` reaches when ``module`` does not bind ``name``."""
        if self.module_file(f"{module}.{name}"):
            yield from ((f, False) for f in self.module_files(f"{module}.{name}"))
            return
        path = self.module_file(module)
        if path is None:
            return
        bindings = self.bindings(path)
        lazy = bindings.get("__getattr__")
        if name in bindings or not isinstance(lazy, ast.FunctionDef) or (module, name) in self._lazy:
            return
        self._lazy.add((module, name))  # a __getattr__ that imports the name from its own module
        try:
            found = list(self.reached(path, False, [lazy]))
        finally:
            self._lazy.discard((module, name))
        yield from found

    def _imported(self, module: str, folder: str, script: bool) -> Iterator[tuple[str, bool]]:
        if self.module_file(module):
            yield from ((f, False) for f in self.module_files(module))
        elif script and "." not in module and (self.root / folder / f"{module}.py").is_file():
            yield f"{folder}/{module}.py", True  # a script's folder is its sys.path[0]

    # -- closures ------------------------------------------------------------------------------
    def closure(self, roots: Iterable[tuple[str, bool]]) -> dict[str, str | None]:
        """Every project file reachable from ``roots`` ((file, script) pairs), each mapped to the
        file that first reached it (None for a root); CLI files are left out (a CLI module reached
        from stage code still has its imports followed)."""
        came_from: dict[str, str | None] = {}
        todo: deque[tuple[str, bool, str | None]] = deque((f, s, None) for f, s in roots)
        while todo:
            path, script, parent = todo.popleft()
            if path in came_from:
                continue
            came_from[path] = parent
            if (path, script) not in self._edges:
                self._edges[(path, script)] = list(self.reached(path, script))
            todo.extend((f, s, path) for f, s in self._edges[(path, script)])
        return {p: parent for p, parent in came_from.items() if not covers(CLI, p)}

    def stage_closure(self, stage: Stage) -> dict[str, str | None]:
        """The code closure of a stage (what every one of its commands runs), each file mapped to
        the file that imports it (see ``closure``)."""
        roots: list[tuple[str, bool]] = []
        for cmd in stage.cmds:
            roots.extend(self.command_roots(cmd))
        return self.closure(roots)

    def command_roots(self, cmd: str) -> list[tuple[str, bool]]:
        """The files a shell command starts in (ValueError for a command this cannot follow)."""
        argv = shlex.split(cmd)
        if argv[0] == "execverify":
            return self.cli_roots(argv[1:])
        if Path(argv[0]).name.startswith("python"):
            if argv[1] == "-m":
                files = self.module_files(argv[2])
                if not files or self.module_file(argv[2]) is None:
                    raise ValueError(f"{cmd!r}: no module {argv[2]} in the project")
                return [(f, False) for f in files]
            if (self.root / argv[1]).is_file():
                return [(Path(argv[1]).as_posix(), True)]
        raise ValueError(f"{cmd!r}: not an execverify, python -m or python script command")

    # -- the CLI -------------------------------------------------------------------------------
    def cli_files(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in (self.root / CLI).rglob("*.py"))

    def commands(self) -> dict[tuple[str, ...], tuple[str, ast.FunctionDef]]:
        """Every typer command of the CLI: its path (``("phase2", "build")``) -> (file, function)."""
        groups: dict[tuple[str, str], tuple[str, str] | None] = {}  # (file, var) -> (parent, name)
        found: list[tuple[str, str, str, ast.FunctionDef]] = []
        for path in self.cli_files():
            tree = self.parse(path).tree
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _attr(node.func) == "add_typer" and node.args:
                    var = node.args[0]
                    name = _keyword(node, "name")
                    if isinstance(var, ast.Name) and isinstance(node.func, ast.Attribute) and name:
                        groups[(path, var.id)] = (_name(node.func.value), name)
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    for deco in node.decorator_list:
                        if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute):
                            if deco.func.attr == "command":
                                group = _name(deco.func.value)
                                found.append((path, group, _command_name(deco, node), node))

        def prefix(path: str, var: str, depth: int = 0) -> tuple[str, ...]:
            parent = groups.get((path, var))
            if parent is None or depth > 10:
                return ()
            return (*prefix(path, parent[0], depth + 1), parent[1])

        return {(*prefix(path, var), command): (path, node) for path, var, command, node in found}

    def cli_roots(self, args: list[str]) -> list[tuple[str, bool]]:
        """The files the command function of ``execverify ARGS`` imports (see the module doc)."""
        words = tuple(a for a in _leading_words(args))
        commands = self.commands()
        for n in range(len(words), 0, -1):
            if words[:n] in commands:
                path, function = commands[words[:n]]
                break
        else:
            raise ValueError(f"no command `execverify {' '.join(words)}` in {CLI}/")
        roots: set[tuple[str, bool]] = set()
        self._cli_uses(path, function, roots, set())
        return sorted(roots)

    def _cli_uses(
        self, path: str, node: ast.AST, roots: set[tuple[str, bool]], done: set[tuple[str, str]]
    ) -> None:
        """Add to ``roots`` what ``node`` of the CLI file ``path`` imports or uses of the names its
        module binds; follow the CLI helpers it calls (in its file or another CLI file)."""
        bindings = {k: v for k, v in self.bindings(path).items() if k not in _local_names(node)}
        for file, script in self.reached(path, False, [node]):
            if not covers(CLI, file):
                roots.add((file, script))
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                base = _absolute(inner, self.parse(path))
                for alias in inner.names:
                    self._cli_name(base, alias.name, roots, done)
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load) and inner.id in bindings:
                bound = bindings[inner.id]
                if isinstance(bound, tuple):  # imported at the top: (module, name or None)
                    module, name = bound
                    for file in self.module_files(module):
                        if not covers(CLI, file):
                            roots.add((file, False))
                    if name is not None:
                        roots.update(r for r in self.attribute(module, name) if not covers(CLI, r[0]))
                        self._cli_name(module, name, roots, done)
                elif (path, inner.id) not in done:  # a def or constant of this CLI file
                    done.add((path, inner.id))
                    self._cli_uses(path, bound, roots, done)

    def _cli_name(
        self, module: str, name: str, roots: set[tuple[str, bool]], done: set[tuple[str, str]]
    ) -> None:
        """Follow ``name`` of another CLI module (a helper a command imports from it)."""
        path = self.module_file(module)
        if path is None or not covers(CLI, path) or (path, name) in done:
            return
        done.add((path, name))
        bound = self.bindings(path).get(name)
        if isinstance(bound, ast.AST):
            self._cli_uses(path, bound, roots, done)


def _facet_call(node: ast.AST) -> bool:
    """``x.facet("name")`` with a literal name."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "facet"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _local_names(node: ast.AST) -> set[str]:
    """The names a function binds itself (its parameters, assignments, imports): they shadow the
    module's (a command's ``tasks`` option is not the module's ``tasks`` command)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return set()
    names = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.arg):
            names.add(inner.arg)
        elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            names.add(inner.id)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in inner.names)
    return names


def _command_name(decorator: ast.Call, function: ast.FunctionDef) -> str:
    """A typer command's name: the decorator's first argument or ``name=``, else the function's
    name with dashes."""
    first = decorator.args[0] if decorator.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return _keyword(decorator, "name") or function.name.replace("_", "-")


def _leading_words(args: list[str]) -> Iterator[str]:
    for arg in args:
        if arg.startswith("-"):
            return
        yield arg


def _walk(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node under ``nodes``, leaving out the bodies of ``if TYPE_CHECKING:``."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _name(node.test).endswith("TYPE_CHECKING"):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def _absolute(node: ast.ImportFrom, parsed: _Parsed) -> str:
    """The absolute module of ``from … import`` in ``parsed``, its relative dots resolved."""
    if not node.level:
        return node.module or ""
    if parsed.module is None:
        raise ValueError(f"{parsed.path}: a relative import outside the package")
    package = parsed.module.split(".")
    if not parsed.path.endswith("__init__.py"):
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _module_bindings(parsed: _Parsed) -> dict[str, Any]:
    """Names a module's top level binds: imports -> (module, name or None), defs -> their node."""
    bindings: dict[str, Any] = {}
    for node in parsed.tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.split(".")[0]
                    bindings[top] = (top, None)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, parsed)
            for alias in node.names:
                bindings[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bindings[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bindings[name.id] = node
    return bindings


def _name_of(node: ast.AST) -> str | None:
    return node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None


def _attr(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else ""


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _keyword(call: ast.Call, name: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return None


# -- the checks ----------------------------------------------------------------------------------


def uncovered(stage: Stage, closure: Collection[str]) -> list[str]:
    """The files of the closure that no dep of the stage covers."""
    return sorted(f for f in closure if not any(covers(d, f) for d in stage.deps))


def missing(stage: Stage, outputs: set[str], root: Path = REPO) -> list[str]:
    """Deps that name no path in the checkout and are no stage's output (those DVC builds)."""
    return [d for d in stage.deps if d not in outputs and not (root / d).exists()]


def is_code(dep: str, outputs: set[str], root: Path = REPO) -> bool:
    """A ``.py`` or ``.js`` file or a folder of them, other than data (``data/``, ``grammars/``,
    outputs)."""
    if dep in outputs or dep.split("/")[0] in DATA_FOLDERS:
        return False
    target = root / dep
    return dep.endswith((".py", ".js")) or (target.is_dir() and any(target.rglob("*.py")))


def unused(stage: Stage, closure: Collection[str], outputs: set[str], root: Path = REPO) -> list[str]:
    """Code deps that cover no file of the closure (a dep the stage does not run)."""
    return [d for d in stage.deps if is_code(d, outputs, root) and not any(covers(d, f) for f in closure)]


def chain(closure: dict[str, str | None], path: str) -> list[str]:
    """How the stage reaches ``path``: from its first file to ``path``."""
    links = [path]
    while (parent := closure.get(links[-1])) is not None and parent not in links:
        links.append(parent)
    return links[::-1]


def outputs_of(stages: Iterable[Stage]) -> set[str]:
    return {o for stage in stages for o in stage.outs}


def suggested(files: Collection[str], root: Path = REPO) -> list[str]:
    """Dep lines covering exactly ``files``: a folder where every ``.py`` file below it is among
    them (the highest such folder under a top-level one), else the file."""
    wanted = set(files)
    lines: set[str] = set()
    for path in wanted:
        line = path
        for folder in list(Path(path).parents)[:-2]:  # not "." nor a top-level folder
            below = {p.relative_to(root).as_posix() for p in (root / folder).rglob("*.py")}
            if below <= wanted:
                line = folder.as_posix()
        lines.add(line)
    return sorted(lines)


def report(
    problems: dict[Stage, list[str]], what: str, notes: dict[Stage, dict[str, str]] | None = None
) -> str:
    """One block per stage: what is wrong and the dep lines concerned (each with its note)."""
    blocks = []
    for stage, paths in problems.items():
        said = (notes or {}).get(stage, {})
        lines = [f"      - {p}" + (f"   # {said[p]}" if p in said else "") for p in paths]
        blocks.append(f"stage {stage.label}: {what}\n" + "\n".join(lines))
    return "\n".join(blocks)
