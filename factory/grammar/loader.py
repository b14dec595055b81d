"""Load and validate a grammar folder; every problem is reported as ``file:line: message``.

Layout of a language folder (``grammars/python/``):
- one ``<type>.yaml`` per type (``type:`` key): its input strategy, constants and operations;
- ``builtins.yaml`` (``builtins:`` key): operations not owned by one type (enumerate, zip, ...);
- ``statements.yaml`` (``statements:`` key): predicates for guards, element types, control flow;
  the value of its ``statements:`` key names the language the templates are written in
  (``statements: python``), which checks templates and constants (``factory.languages``);
- word list files (``words.txt``) that ``words`` strategies name, read into their words.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import hashlib
import inspect
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from factory.errors import UserError
from factory.grammar.model import ArgSpec, Call, Grammar, Operation, Predicate, TypeSpec
from factory.grammar.sources import FORM_SOURCES, SOURCES
from factory.grammar.types import Type, parse_type
from factory.inputs.strategies import (
    MIXTURE,
    PROJECT_KINDS,
    STRATEGY_KINDS,
    TYPE_PARAM_KEYS,
    WEIGHT,
    build_spec,
    kind_function,
    word_list_params,
)
from factory.io import SAFE_YAML_LOADER
from factory.languages import Language, UnknownLanguage, language
from factory.literals import literal_eval

PLACEHOLDER_NAME = "recv"


# Names the synthesizer itself writes (factory/synth/tiers.py: the entry, the helper and its
# parameter), so a grammar's names never take them.
RESERVED_NAMES = frozenset({"f", "g", "arg"})
CONTROL_FLOW = {"if", "if_else", "if_elif_else", "for", "for_range", "while"}
LENGTH_RESULT = {"unknown", "same", "grow"}
LENGTH_RECV = {"same", "shrink", "grow", "clear"}


class GrammarError(UserError):
    """A grammar file problem, always ``file:line: message``."""


class _Node(dict):
    """A YAML mapping that remembers its line and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _LineLoader(SAFE_YAML_LOADER):  # type: ignore[valid-type,misc]  # a base chosen at import
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> _Node:
        mapping = _Node(super().construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {k.value: k.start_mark.line + 1 for k, _ in node.value}
        return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping)


class _File:
    """Error reporting bound to one file."""

    def __init__(self, path: Path):
        self.path = path
        self.name = str(path)

    def error(self, node: Any, message: str, key: str | None = None) -> GrammarError:
        line = 0
        if isinstance(node, _Node):
            line = node.key_lines.get(key, node.line) if key else node.line
        return GrammarError(f"{self.name}:{line}: {message}")

    def require(self, node: _Node, key: str, kind: type | tuple[type, ...], where: str) -> Any:
        if key not in node:
            raise self.error(node, f"{where}: missing required key '{key}'")
        value = node[key]
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.error(node, f"{where}: '{key}' must be a {names}, got {value!r}", key)
        return value

    def check_keys(self, node: _Node, allowed: set[str], where: str) -> None:
        for key in node:
            if key not in allowed:
                hint = ", ".join(sorted(allowed))
                raise self.error(node, f"{where}: unknown key '{key}' (allowed: {hint})", key)

    def type_expr(self, node: dict[Any, Any], key: str, text: Any, where: str) -> Type:
        if not isinstance(text, str):
            raise self.error(node, f"{where}: '{key}' must be a type expression, got {text!r}", key)
        try:
            return parse_type(text)
        except ValueError as exc:
            raise self.error(node, f"{where}: {exc}", key) from None

    def call(self, node: _Node, key: str, text: Any, where: str) -> Call:
        """Parse ``name(arg, ...)``: Name args are placeholder references, constants are literals.

        This is the grammar format's own call syntax (``requires:``, ``from:``), the same whatever
        language the templates are written in."""
        if not isinstance(text, str):
            raise self.error(node, f"{where}: '{key}' must look like name(args), got {text!r}", key)
        try:
            expr = ast.parse(text if "(" in text else f"{text}()", mode="eval").body
        except SyntaxError:
            hint = (
                " (quote it: YAML splits unquoted commas in [...] lists)"
                if text.count("(") != text.count(")")
                else ""
            )
            raise self.error(node, f"{where}: cannot parse {text!r} as name(args){hint}", key) from None
        if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Name) or expr.keywords:
            raise self.error(node, f"{where}: {text!r} must look like name(args)", key)
        args, literal = [], []
        for arg in expr.args:
            if isinstance(arg, ast.Name):
                args.append(arg.id)
                literal.append(False)
            else:
                try:
                    args.append(literal_eval(arg))
                except ValueError:
                    raise self.error(
                        node,
                        f"{where}: argument {ast.unparse(arg)!r} of {text!r} must be a name or a literal",
                        key,
                    ) from None  # noqa: E501
                literal.append(True)
        return Call(expr.func.id, tuple(args), tuple(literal))


def _placeholders(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


def _load_yaml(path: Path) -> _Node:
    try:
        data = yaml.load(path.read_text(), Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise GrammarError(f"{path}:{line}: YAML syntax error: {exc.problem or exc}") from None
    except OSError as exc:
        raise GrammarError(f"{path}:0: cannot read: {exc.strerror}") from None
    if not isinstance(data, _Node):
        raise GrammarError(f"{path}:1: a grammar file must be a YAML mapping")
    return data


def _parse_operation(
    f: _File, node: Any, owner: str, known_types: set[str], lang: Language
) -> list[Operation]:
    if not isinstance(node, _Node):
        raise f.error(None, f"operation must be a mapping, got {node!r}")
    allowed = {
        "name", "template", "receiver", "args", "returns", "mutates", "requires", "statement",
        "length", "imports", "names", "doc", "copies", "resets", "idempotent", "stable",
        "removes", "subset", "branches",
    }  # fmt: skip
    name = f.require(node, "name", str, "operation")
    where = f"operation '{name}'"
    f.check_keys(node, allowed, where)
    template = f.require(node, "template", str, where)
    receivers_raw = f.require(node, "receiver", (str, list), where)
    receivers = [receivers_raw] if isinstance(receivers_raw, str) else receivers_raw
    receiver_types = [f.type_expr(node, "receiver", r, where) for r in receivers]
    args_node = node.get("args") or _Node()
    if not isinstance(args_node, dict):
        raise f.error(node, f"{where}: 'args' must be a mapping of name → {{type, from}}", "args")
    statement = node.get("statement", False)
    mutates = node.get("mutates", False)
    copies = node.get("copies", False)
    resets = node.get("resets", False)
    idempotent = node.get("idempotent", False)
    stable = node.get("stable", False)
    removes = node.get("removes", False)
    subset = node.get("subset", False)
    branches = node.get("branches", False)
    flags = (
        ("statement", statement), ("mutates", mutates), ("copies", copies), ("resets", resets),
        ("idempotent", idempotent), ("stable", stable), ("removes", removes),
        ("subset", subset), ("branches", branches),
    )  # fmt: skip
    for flag, value in flags:
        if not isinstance(value, bool):
            raise f.error(node, f"{where}: '{flag}' must be true or false", flag)
    if resets and not mutates:
        raise f.error(node, f"{where}: 'resets' is for an operation that mutates its receiver", "resets")
    returns_raw = node.get("returns", "none")
    returns = None if returns_raw in ("none", None) else f.type_expr(node, "returns", returns_raw, where)
    if statement and returns is not None:
        raise f.error(node, f"{where}: a statement operation returns none", "returns")

    args: list[ArgSpec] = []
    for arg_name, spec in args_node.items():
        if not isinstance(spec, _Node):
            spec_type = f.type_expr(args_node, arg_name, spec, f"{where} arg '{arg_name}'")
            args.append(ArgSpec(arg_name, spec_type, None))
            continue
        f.check_keys(spec, {"type", "from", "identity"}, f"{where} arg '{arg_name}'")
        arg_type = f.type_expr(spec, "type", f.require(spec, "type", str, f"{where} arg '{arg_name}'"), where)
        identity = _identity(f, spec, f"{where} arg '{arg_name}'", lang)
        source = None
        if "from" in spec:
            source = f.call(spec, "from", spec["from"], f"{where} arg '{arg_name}'")
            arity = SOURCES.get(source.name)
            if arity is None:
                raise f.error(
                    spec,
                    f"{where}: unknown value source '{source.name}' (known: {', '.join(sorted(SOURCES))})",
                    "from",
                )  # noqa: E501
            if arity >= 0 and len(source.args) != arity:
                raise f.error(spec, f"{where}: '{source.name}' takes {arity} argument(s)", "from")
            if source.name in FORM_SOURCES:
                _check_forms(f, spec, source, f"{where} arg '{arg_name}'", lang)
        args.append(ArgSpec(arg_name, arg_type, source, identity))

    names = {PLACEHOLDER_NAME, *(a.name for a in args)}
    used = _placeholders(template)
    for placeholder in used:
        if placeholder not in names:
            raise f.error(node, f"{where}: template uses {{{placeholder}}} but no such arg", "template")
    for missing in names - set(used):
        raise f.error(node, f"{where}: arg '{missing}' is not used in the template", "template")
    problem = lang.template_error(template.format(**{n: f"_{n}" for n in names}), statement=statement)
    if problem is not None:
        kind = "statement" if statement else "expression"
        message = f"{where}: template is not a {lang.display_name} {kind}: {template!r} ({problem})"
        raise f.error(node, message, "template")
    for arg in args:
        for ref in arg.source.refs() if arg.source else []:
            if ref not in names:
                raise f.error(node, f"{where}: arg '{arg.name}' refers to unknown '{ref}'", "args")

    requires = []
    for req in node.get("requires") or []:
        call = f.call(node, "requires", req, where)
        for ref in call.refs():
            if ref not in names:
                raise f.error(node, f"{where}: requires {req!r} names unknown '{ref}'", "requires")
        requires.append(call)

    length = node.get("length") or {}
    if not isinstance(length, dict):
        raise f.error(node, f"{where}: 'length' must be a mapping", "length")
    f.check_keys(length, {"result", "recv"}, f"{where} length") if isinstance(length, _Node) else None
    length_result = length.get("result", "unknown")
    length_recv = length.get("recv", "same")
    if length_result not in LENGTH_RESULT:
        raise f.error(node, f"{where}: length.result must be one of {sorted(LENGTH_RESULT)}", "length")
    if length_recv not in LENGTH_RECV:
        raise f.error(node, f"{where}: length.recv must be one of {sorted(LENGTH_RECV)}", "length")

    imports = node.get("imports") or []
    if not isinstance(imports, list) or not all(
        isinstance(m, str) and all(part.isidentifier() for part in m.split(".")) for m in imports
    ):
        raise f.error(node, f"{where}: 'imports' must be a list of module names", "imports")

    op_names = _names(f, node, "names", where, lang, required=False)
    if op_names and returns is None:
        raise f.error(node, f"{where}: 'names' name its result, but it returns none", "names")

    ops = []
    for receiver in receiver_types:
        bound_vars = receiver.variables() | set().union(*(a.type.variables() for a in args))
        for t in [receiver, *(a.type for a in args), *([returns] if returns else [])]:
            _check_known(f, node, t, known_types, where)
        if returns is not None and not returns.variables() <= bound_vars:
            raise f.error(node, f"{where}: returns {returns} uses a type variable bound nowhere", "returns")
        if idempotent and not (len(args) == 1 and args[0].type == receiver == returns):
            message = f"{where}: 'idempotent' is for an operation on two values of one type, returning it"
            raise f.error(node, message, "idempotent")
        if stable and (returns != receiver or mutates or statement):
            message = f"{where}: 'stable' is for an operation that returns a value of its receiver's type"
            raise f.error(node, message, "stable")
        if removes and not (
            len(args) == 1
            and args[0].type == receiver
            and (returns == receiver or (mutates and returns is None))
        ):
            message = f"{where}: 'removes' is for two values of one type, returning or changing the first"
            raise f.error(node, message, "removes")
        if subset and not (mutates or returns == receiver):
            message = (
                f"{where}: 'subset' is for an operation returning or changing a value of its receiver's type"
            )
            raise f.error(node, message, "subset")
        if branches and (receiver.name != lang.core_types.boolean or not args or mutates or statement):
            boolean = lang.core_types.boolean
            message = f"{where}: 'branches' is for an expression whose {boolean} receiver picks an argument"
            raise f.error(node, message, "branches")
        ops.append(
            Operation(
                op_id=f"{owner}.{name}",
                name=name,
                template=template,
                receiver=receiver,
                args=tuple(args),
                returns=returns,
                mutates=mutates,
                requires=tuple(requires),
                statement=statement,
                length_result=length_result,
                length_recv=length_recv,
                imports=tuple(imports),
                file=f.name,
                line=node.line,
                names=op_names,
                copies=copies,
                resets=resets,
                idempotent=idempotent,
                stable=stable,
                removes=removes,
                subset=subset,
                branches=branches,
            )
        )
    return ops


def _check_forms(f: _File, spec: _Node, source: Call, where: str, lang: Language) -> None:
    """A form source (``member(recv, 'max({recv})', ...)``): at least one form, each a template
    over the placeholders the source names that is an expression of the language."""
    refs = source.refs()
    forms = [a for a, literal in zip(source.args, source.literal_args, strict=True) if literal]
    if not refs or not forms:
        raise f.error(spec, f"{where}: '{source.name}' takes a placeholder and at least one form", "from")
    for form in forms:
        used = _placeholders(form) if isinstance(form, str) else []
        if not isinstance(form, str) or not used or not set(used) <= set(refs):
            message = f"{where}: form {form!r} must be a string over {{{refs[0]}}}"
            raise f.error(spec, message, "from")
        if lang.template_error(form.format(**{r: f"_{r}" for r in refs}), statement=False) is not None:
            message = f"{where}: form {form!r} is not a {lang.display_name} expression"
            raise f.error(spec, message, "from")


def _identity(f: _File, spec: _Node, where: str, lang: Language) -> tuple[str, ...]:
    """An arg's ``identity``: literal texts of the values that make its operation a no-op."""
    values = spec.get("identity")
    if values is None:
        return ()
    if not isinstance(values, list) or not values:
        raise f.error(spec, f"{where}: 'identity' must be a non-empty list of literal texts", "identity")
    texts = []
    for value in values:
        text = value if isinstance(value, str) else lang.literal(value)
        try:
            lang.literal_value(text)
        except (ValueError, SyntaxError, TypeError):
            message = (
                f"{where}: identity {value!r} is not a {lang.display_name} literal (quote strings: \"''\")"
            )
            raise f.error(spec, message, "identity") from None
        texts.append(text)
    return tuple(texts)


def _check_known(f: _File, node: _Node, t: Type, known: set[str], where: str) -> None:
    if t.is_var:
        return
    if t.name not in known:
        raise f.error(node, f"{where}: unknown type '{t.name}' (no grammar file defines it)")
    for a in t.args:
        _check_known(f, node, a, known, where)


def _parse_type_file(f: _File, data: _Node, lang: Language, words: dict[Path, tuple[str, ...]]) -> TypeSpec:
    """One type file; ``words`` collects the word list files its strategies read."""
    allowed = {
        "type", "params", "names", "strategy", "element_strategy", "convert", "constants", "literal",
        "iterates", "element_names", "operations", "doc",
    }  # fmt: skip
    f.check_keys(data, allowed, "type file")
    name = f.require(data, "type", str, "type file")
    params = tuple(data.get("params") or ())
    for p in params:
        if not (isinstance(p, str) and len(p) == 1 and p.isupper()):
            raise f.error(
                data,
                f"type '{name}': params must be single upper-case letters, got {p!r}",
                "params",
            )
    names = _names(f, data, "names", f"type '{name}'", lang, required=True)
    element_names = _names(f, data, "element_names", f"type '{name}'", lang, required=False)
    if element_names and data.get("iterates") is None:
        raise f.error(data, f"type '{name}': element_names needs 'iterates'", "element_names")
    strategy = f.require(data, "strategy", dict, f"type '{name}'")
    element_strategy = data.get("element_strategy")
    if element_strategy is not None and not isinstance(element_strategy, _Node):
        raise f.error(data, f"type '{name}': element_strategy must be a mapping", "element_strategy")
    where = f"type '{name}':"
    strategy = _check_spec(f, strategy, f"{where} strategy", params, words)
    if element_strategy is not None:
        element_strategy = _check_spec(f, element_strategy, f"{where} element_strategy", params, words)
    convert = data.get("convert")
    if convert is not None and not (isinstance(convert, str) and callable(getattr(builtins, convert, None))):
        close = difflib.get_close_matches(str(convert), [n for n in dir(builtins) if n.islower()], n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise f.error(data, f"type '{name}': convert {convert!r} is not a Python builtin{hint}", "convert")
    constants = data.get("constants") or []
    for c in constants:
        try:
            lang.literal_value(str(c))
        except (ValueError, SyntaxError, TypeError):
            raise f.error(
                data, f"type '{name}': constant {c!r} is not a {lang.display_name} literal", "constants"
            ) from None
    literal = data.get("literal")
    if not constants and not literal:
        raise f.error(data, f"type '{name}': needs 'constants' (scalars) or 'literal' (containers)")
    if literal is not None:
        f.check_keys(literal, {"form", "empty", "item", "min_size", "max_size"}, f"type '{name}' literal")
        f.require(literal, "form", str, f"type '{name}' literal")
        f.require(literal, "empty", str, f"type '{name}' literal")
    return TypeSpec(
        name=name,
        params=params,
        names=tuple(names),
        strategy=strategy,
        element_strategy=element_strategy,
        convert=convert,
        constants=tuple(str(c) for c in constants),
        literal=dict(literal) if literal else None,
        iterates=_iterates(f, data, name, params),
        file=f.name,
        line=data.line,
        element_names=element_names,
    )


def _iterates(f: _File, data: _Node, name: str, params: tuple[str, ...]) -> str | None:
    text = data.get("iterates")
    if text is None:
        return None
    t = f.type_expr(data, "iterates", text, f"type '{name}'")
    if not t.variables() <= set(params):
        raise f.error(data, f"type '{name}': iterates {t} uses a variable that is not a param", "iterates")
    return text


def load_grammar(folder: str | Path) -> Grammar:
    """Load every YAML file of a language folder; raises GrammarError (``file:line: message``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GrammarError(f"{folder}:0: grammar folder not found")
    paths = sorted(folder.glob("*.yaml"))
    if not paths:
        raise GrammarError(f"{folder}:0: no *.yaml grammar files")
    digest = hashlib.sha256()
    loaded = []
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        loaded.append((_File(path), _load_yaml(path)))

    statements = [(f, d) for f, d in loaded if "statements" in d]
    if len(statements) != 1:
        raise GrammarError(
            f"{folder}:0: expected exactly one file with a 'statements:' section, found {len(statements)}"
        )
    lang = _language(*statements[0])
    grammar = Grammar(language=lang.name)
    type_files = [(f, d) for f, d in loaded if "type" in d]
    words: dict[Path, tuple[str, ...]] = {}
    for f, data in type_files:
        spec = _parse_type_file(f, data, lang, words)
        if spec.name in grammar.types:
            raise f.error(
                data,
                f"type '{spec.name}' is defined twice (also in {grammar.types[spec.name].file})",
                "type",
            )
        grammar.types[spec.name] = spec
    known = set(grammar.types) | {"none"}
    for path in sorted(words):  # the word lists the strategies read are part of the grammar
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    grammar.grammar_hash = digest.hexdigest()[:16]

    _parse_statements(*statements[0], grammar, known, lang)

    seen: dict[str, str] = {}
    for f, data in loaded:
        if "type" in data:
            owner, ops_node = data["type"], data.get("operations") or []
        elif "builtins" in data:
            f.check_keys(data, {"builtins", "doc"}, "builtins file")
            owner, ops_node = "builtins", data["builtins"] or []
        elif "statements" in data:
            continue
        else:
            raise f.error(data, "a grammar file needs a 'type:', 'builtins:' or 'statements:' key")
        if not isinstance(ops_node, list):
            raise f.error(data, "operations must be a list")
        for node in ops_node:
            ops = _parse_operation(f, node, owner, known, lang)
            if ops[0].op_id in seen:
                raise f.error(
                    node,
                    f"operation '{ops[0].op_id}' defined twice (first at {seen[ops[0].op_id]})",
                    "name",
                )
            seen[ops[0].op_id] = f"{f.name}:{node.line}"
            for op in ops:
                for req in op.requires:
                    if req.name not in grammar.predicates:
                        raise f.error(
                            node,
                            f"operation '{op.name}': unknown predicate '{req.name}'",
                            "requires",
                        )
            grammar.operations.extend(ops)
    return grammar


def _check_spec(
    f: _File, spec: _Node, where: str, params: tuple[str, ...], words: dict[Path, tuple[str, ...]]
) -> dict[str, Any]:
    """Check one strategy spec (a ``mixture``'s branches recursively) and build it once; the
    spec as the inputs stage uses it, word list files read into tuples of words."""
    kind = spec.get("kind")
    if kind not in STRATEGY_KINDS:
        close = difflib.get_close_matches(str(kind), sorted(STRATEGY_KINDS), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        own = ", ".join(sorted([*PROJECT_KINDS, MIXTURE]))
        message = f"{where} kind {kind!r} is not a hypothesis.strategies function nor one of {own}{hint}"
        raise f.error(spec, message, "kind")
    if kind == MIXTURE:
        return _check_mixture(f, spec, where, params, words)
    for bound in ("min_size", "max_size", "min_value", "max_value"):
        if bound in spec and (isinstance(spec[bound], bool) or not isinstance(spec[bound], (int, float))):
            raise f.error(spec, f"{where} {bound} must be a number", bound)
    lo, hi = spec.get("min_size", 0), spec.get("max_size")
    if hi is not None and lo > hi:
        raise f.error(spec, f"{where} min_size {lo} > max_size {hi}", "max_size")
    lo, hi = spec.get("min_value"), spec.get("max_value")
    if lo is not None and hi is not None and lo > hi:
        raise f.error(spec, f"{where} min_value {lo} > max_value {hi}", "max_value")
    for key in TYPE_PARAM_KEYS:
        if isinstance(spec.get(key), str) and spec[key] not in params:
            raise f.error(spec, f"{where} {key} must name a type parameter {sorted(params)}", key)
    resolved = dict(spec)
    for key in word_list_params(kind):
        if key in spec:
            resolved[key] = _read_words(f, spec, key, f"{where} {kind}", words)
    _check_strategy_call(f, spec, resolved, where, params)
    return resolved


def _check_mixture(
    f: _File, spec: _Node, where: str, params: tuple[str, ...], words: dict[Path, tuple[str, ...]]
) -> dict[str, Any]:
    f.check_keys(spec, {"kind", "of"}, f"{where} mixture")
    branches = spec.get("of")
    if not isinstance(branches, list) or not branches:
        raise f.error(spec, f"{where} mixture: 'of' must be a non-empty list of strategies", "of")
    resolved = []
    for i, branch in enumerate(branches, 1):
        if not isinstance(branch, _Node):
            raise f.error(spec, f"{where} mixture: branch {i} must be a mapping, got {branch!r}", "of")
        weight = branch.get(WEIGHT, 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            raise f.error(branch, f"{where} mixture branch {i}: weight must be a number > 0", WEIGHT)
        inner = _Node({k: v for k, v in branch.items() if k != WEIGHT})
        inner.line, inner.key_lines = branch.line, branch.key_lines
        resolved.append(
            {WEIGHT: float(weight), **_check_spec(f, inner, f"{where} mixture branch {i}", params, words)}
        )
    return {"kind": MIXTURE, "of": resolved}


def _read_words(
    f: _File, spec: _Node, key: str, where: str, words: dict[Path, tuple[str, ...]]
) -> tuple[str, ...]:
    """The words of a word list file next to the grammar files: lower-case words separated by
    whitespace, each once; ``#`` starts a comment."""
    name = spec[key]
    if not isinstance(name, str) or Path(name).name != name:
        raise f.error(spec, f"{where}: '{key}' must name a file of the grammar folder, got {name!r}", key)
    path = f.path.parent / name
    if path in words:
        return words[path]
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise f.error(spec, f"{where}: cannot read word list {str(path)!r}: {exc.strerror}", key) from None
    found: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        for word in line.split("#", 1)[0].split():
            if not re.fullmatch(r"[a-z]+", word):
                raise GrammarError(f"{path}:{number}: word {word!r} must be lower-case ASCII letters")
            if word in found:
                first = found[word]
                raise GrammarError(f"{path}:{number}: word {word!r} is listed twice (first at line {first})")
            found[word] = number
    if not found:
        raise f.error(spec, f"{where}: word list {str(path)!r} has no words", key)
    words[path] = tuple(found)
    return words[path]


def _names(f: _File, node: _Node, key: str, where: str, lang: Language, *, required: bool) -> tuple[str, ...]:
    """A ``names`` list: names the language accepts (``Language.name_error``: Python's are
    snake_case words, never a keyword or a builtin), never a name the synthesizer writes itself
    (``f``, ``g``, ``arg``), each once."""
    names = node.get(key)
    if names is None and not required:
        return ()
    if not isinstance(names, list) or not names:
        raise f.error(node, f"{where}: '{key}' must be a non-empty list of names", key)
    for n in names:
        problem = None
        if isinstance(n, bool):
            problem = "is a YAML boolean (on/off/yes/no): quote it or pick another name"
        elif not isinstance(n, str):
            problem = "is not a name"
        elif (problem := lang.name_error(n)) is not None:
            pass
        elif n in RESERVED_NAMES:
            problem = "is a name the synthesizer writes itself"
        elif names.count(n) > 1:
            problem = "is listed twice"
        if problem:
            raise f.error(node, f"{where}: name {n!r} {problem}", key)
    return tuple(names)


def _check_strategy_call(
    f: _File, spec: _Node, kwargs_in: dict[str, Any], where: str, params: tuple[str, ...]
) -> None:
    """Build the strategy the way the inputs stage does (``factory.inputs.strategies``), at load time.

    Every argument is checked against the signature of the kind's function (an unknown name
    suggests the closest one), then the strategy is built and validated, so that a bad value (a
    string where a number goes) is the function's own message at the key's line instead of a
    traceback from the inputs stage. Type parameters stand in as a placeholder strategy.
    """
    strategy = spec
    kind = strategy["kind"]
    func = kind_function(kind)
    where = f"{where} {kind}"
    kwargs = {k: v for k, v in kwargs_in.items() if k != "kind"}
    signature = inspect.signature(func)
    parameters = signature.parameters.values()
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not any(p.kind is p.VAR_KEYWORD for p in parameters):
        for key in kwargs:
            if key not in named:
                close = difflib.get_close_matches(key, named, n=1)
                if close:
                    hint = f"did you mean '{close[0]}'?"
                elif named:
                    hint = f"{kind} takes {', '.join(named)}"
                else:
                    hint = f"{kind} takes no named arguments"
                raise f.error(strategy, f"{where}: unknown argument '{key}' ({hint})", key)
    placeholder = st.integers()
    values = {k: placeholder if k in TYPE_PARAM_KEYS and isinstance(v, str) else v for k, v in kwargs.items()}
    positional = [placeholder] * len(params) if kind == "tuples" else []
    try:
        signature.bind(*positional, **values)
    except TypeError as exc:
        missing = [
            p.name
            for p in parameters
            if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name not in values
        ]
        message = f"missing required argument '{missing[0]}'" if missing else str(exc)
        raise f.error(strategy, f"{where}: {message}", "kind") from None
    try:
        built = build_spec(kwargs_in, lambda _: placeholder, len(params))
        if isinstance(built, st.SearchStrategy):
            built.validate()
    except (InvalidArgument, TypeError, ValueError) as exc:
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise f.error(strategy, f"{where}: {message}", _named_in(message, kwargs)) from None
    if not isinstance(built, st.SearchStrategy):
        raise f.error(strategy, f"{where}: {kind}(...) does not make a strategy", "kind")


def _named_in(message: str, kwargs: dict[str, Any]) -> str:
    """The argument a Hypothesis message is about (``min_size='x'``...), else ``kind``."""
    spots = {}
    for key in kwargs:
        found = re.search(rf"\b{re.escape(key)}=", message) or re.search(rf"\b{re.escape(key)}\b", message)
        if found:
            spots[key] = (found.group().endswith("="), -found.start())
    return max(spots, key=spots.__getitem__) if spots else "kind"


def _language(f: _File, data: _Node) -> Language:
    """The language the statements file names (``statements: python``)."""
    name = data["statements"]
    if not isinstance(name, str):
        raise f.error(data, f"statements: must name the grammar's language, got {name!r}", "statements")
    try:
        return language(name)
    except UnknownLanguage as exc:
        raise f.error(data, f"statements: {exc}", "statements") from None


def _parse_statements(f: _File, data: _Node, grammar: Grammar, known: set[str], lang: Language) -> None:
    f.check_keys(
        data,
        {"statements", "element_types", "predicates", "control_flow", "output_weights", "doc"},
        "statements file",
    )
    elements = data.get("element_types") or []
    if not elements:
        raise f.error(data, "statements: 'element_types' must list the types type variables bind to")
    grammar.element_types = tuple(f.type_expr(data, "element_types", e, "element_types") for e in elements)
    for t in grammar.element_types:
        _check_known(f, data, t, known, "element_types")
    preds = data.get("predicates") or {}
    for name, spec in preds.items():
        where = f"predicate '{name}'"
        f.check_keys(spec, {"params", "guard", "min_len"}, where)
        params = tuple(f.require(spec, "params", list, where))
        guard = f.require(spec, "guard", str, where)
        if set(_placeholders(guard)) != set(params):
            raise f.error(spec, f"{where}: guard must use exactly its params {list(params)}", "guard")
        problem = lang.template_error(guard.format(**{p: f"_{p}" for p in params}), statement=False)
        if problem is not None:
            message = f"{where}: guard is not a {lang.display_name} expression: {guard!r} ({problem})"
            raise f.error(spec, message, "guard")
        min_len = spec.get("min_len") or {}
        grammar.predicates[name] = Predicate(name, params, guard, dict(min_len), f.name, spec.line)
    flow = data.get("control_flow") or {}
    for name, weight in flow.items():
        if name not in CONTROL_FLOW:
            raise f.error(
                flow,
                f"control_flow: unknown construct '{name}' (known: {sorted(CONTROL_FLOW)})",
                name,
            )
        if not isinstance(weight, (int, float)) or weight < 0:
            raise f.error(flow, f"control_flow: weight of '{name}' must be a number ≥ 0", name)
    grammar.control_flow = dict(flow)
    weights = data.get("output_weights", _Node())
    if not isinstance(weights, _Node):
        raise f.error(data, "output_weights: must map type names to weights", "output_weights")
    for name, weight in weights.items():
        if name not in grammar.types:
            close = difflib.get_close_matches(str(name), sorted(grammar.types), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise f.error(weights, f"output_weights: unknown type '{name}'{hint}", name)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
            raise f.error(weights, f"output_weights: weight of '{name}' must be a number ≥ 0", name)
    grammar.output_weights = {name: float(w) for name, w in weights.items()}


def load_grammars(folders: Sequence[str | Path]) -> dict[str, Grammar]:
    """The grammars of ``folders`` by language name, in the folders' order (``synthesize.grammars``);
    GrammarError when two folders are written in one language."""
    grammars: dict[str, Grammar] = {}
    for folder in folders:
        grammar = load_grammar(folder)
        if grammar.language in grammars:
            raise GrammarError(f"{folder}:0: a second grammar in '{grammar.language}' (one per language)")
        grammars[grammar.language] = grammar
    return grammars


class StageGrammars:
    """The grammars a stage is given (``synthesize.grammars``), by language, with their folders;
    ``of`` names the folders given when a program's language has none of them."""

    def __init__(self, grammar_dirs: str | Path | Sequence[str | Path]) -> None:
        folders = [grammar_dirs] if isinstance(grammar_dirs, str | Path) else list(grammar_dirs)
        self.grammars = load_grammars(folders)
        self.folders = {name: str(folder) for name, folder in zip(self.grammars, folders, strict=True)}

    def of(self, language: str, programs_dir: str | Path) -> Grammar:
        """The grammar of ``language``; UserError naming ``programs_dir`` when none was given."""
        if language not in self.grammars:
            given = ", ".join(self.folders.values())
            raise UserError(
                f"{programs_dir}: programs in '{language}', but no grammar of it is given ({given})"
            )
        return self.grammars[language]
