"""Line tracer: run one call of a program's entry function and record steps and changed states.

This implements the trace contract of docs/design.md §4; the full rules, with the reasons for each choice,
are in ``factory/trace/semantics.md``. In short:

* The program is compiled under the pseudo-filename ``"<program>"``; only frames of that code are
  traced, and the module level (which defines the functions) runs untraced.
* A *step* is one statement execution, as reported by a ``line`` event of ``sys.settrace``.
  Python 3.11 also emits line events on the continuation lines of a statement that spans several
  lines; those are folded into the statement's step, which reports the statement's first line.
  A line event is folded when, in the same frame, it follows a line event of the *same statement*
  at a *different raw line* with a *higher bytecode offset* (one execution of one statement only
  moves forward; a loop that comes back to a statement always jumps backwards or repeats a line).
* Frames of expression-level code (``<listcomp>``, ``<setcomp>``, ``<dictcomp>``, ``<genexpr>``,
  ``<lambda>``) are not traced: their work belongs to the step of the statement that holds the
  expression, and their variables are not states. Program functions they call are traced.
* ``states`` lists, for each step, the variables of the step's frame that are new or changed in
  value at that frame's next step or return, ignoring deeper frames. Change detection is cheap:
  identity for scalars, a ``marshal`` fingerprint for built-in containers (a mutated list is the
  same object with new bytes), and a ``repr`` comparison only for other values; only changed
  values are repr'd, long ones without building their whole repr.

The tracer is a plain in-process function (``trace_call``; ``trace_job`` for the worker pool) and
imports only the standard library and small modules (``factory.literals``, ``factory.program_code``,
``factory.trace.source``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import itertools
import json
import marshal
import math
import re
import sys
from types import CodeType, FrameType
from typing import Any

from factory.errors import UserError
from factory.literals import canonical_repr, literal_eval, parse_args
from factory.program_code import PROGRAM_FILENAME, program_code
from factory.trace.source import BLOCK_FIELDS, Statement, first_line, parse_program

ARGS_FILENAME = "<args>"  # evaluated argument expressions: never traced

#: Code objects whose frames are part of an expression: never steps, never states.
EXPRESSION_CODE_NAMES = frozenset({"<lambda>", "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})

Snapshot = tuple[Any, bytes | str | None]  # (value, memo): see _snapshot

_CO_OPTIMIZED = 0x1
_GENERATOR_FLAGS = 0x20 | 0x100 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR

# Immutable scalar types: a value of one of these never changes behind a name's back.
_ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None)})
# Atoms whose equality (with equal types) implies equal repr; floats need repr (0.0 == -0.0).
_EQ_IS_REPR = frozenset({int, bool, str, bytes, type(None)})
_UNSIZED = frozenset({int, bool, type(None)})
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# Containers fingerprinted with marshal (format 2: no back-references, so the bytes depend only on
# the value: exact types, bool apart from int, -0.0 apart from 0.0; nested containers included).
_MARSHALLED = frozenset({list, tuple, dict, set, frozenset})
_MARSHAL_VERSION = 2


class _StepLimit(BaseException):
    """Raised inside the program when the step budget is spent (BaseException: rarely caught)."""


class _StateLimit(BaseException):
    """Raised inside the program when a variable's value outgrows ``max_state_bytes``."""


#: A value whose marshal fingerprint passes this many bytes ends the trace (``state_too_large``):
#: watching it for changes at every step would cost more than the whole rest of the trace, and a
#: value that large is never asked about (its repr is far past ``max_repr``).
MAX_STATE_BYTES = 1 << 20


class _TracerFailure(BaseException):
    """A bug in the tracer itself, kept apart from the program's own exceptions."""


class _NullSink:
    """A stdout that drops everything (program output is not part of a trace)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


_NULL_SINK = _NullSink()

# ---------------------------------------------------------------------------------------------
# Source analysis: which statement each physical line belongs to


def statement_starts(source: str) -> dict[int, int]:
    """Map each line that belongs to a statement to the first line of its innermost statement.

    Compound statements own only their header lines (``if``/``while``/``for``/``with``/``def``
    headers, ``try:``, ``except ...:``, ``case ...:``, decorators); their bodies' lines belong to
    the body statements. Lines outside any statement (blank, comments, ``else:``) are absent.
    Raises SyntaxError when the source does not parse.
    """
    return _starts(parse_program(source))


def _starts(tree: ast.Module) -> dict[int, int]:
    starts: dict[int, int] = {}
    for stmt in tree.body:
        _map_statement(stmt, starts)
    return starts


@functools.lru_cache(maxsize=1024)
def _prepare(
    source: str, shipped: bytes | None = None, one_line: bool | None = None
) -> tuple[CodeType, dict[int, int]]:
    """The program's code once per source text (traces of many inputs share it; ``shipped``: the
    parent's compile of it, see ``factory.program_code``); with the statement starts that fold
    continuation lines, or ``{}`` when every statement sits on one line (then every line event
    starts its own statement, and the tree is not needed). ``one_line``: the parent's
    ``one_line_statements(source)``, when it sent it (None: checked here)."""
    if one_line is None:
        one_line = one_line_statements(source)
    if one_line:
        return program_code(source, shipped), {}
    tree = parse_program(source)
    return program_code(tree, shipped), _starts(tree)


# String literals (triple-quoted first) and comments, as the tokenizer reads them.
_STRINGS_AND_COMMENTS = re.compile(
    r"'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"|'(?:[^'\\\n]|\\.)*'"
    r'|"(?:[^"\\\n]|\\.)*"|#[^\n]*',
    re.S,
)


def one_line_statements(source: str) -> bool:
    """True when no statement of ``source`` can span two lines: no string literal holds a line
    break, no line ends inside brackets or with a backslash, and no decorator (whose statement
    starts on the decorator's line). A lexical check, conservative: False when unsure."""
    for match in _STRINGS_AND_COMMENTS.finditer(source):
        if "\n" in match.group():
            return False
    depth = 0
    for line in _STRINGS_AND_COMMENTS.sub("0", source).split("\n"):
        if line.lstrip().startswith("@") or line.rstrip().endswith("\\"):
            return False
        depth += line.count("(") + line.count("[") + line.count("{")
        depth -= line.count(")") + line.count("]") + line.count("}")
        if depth:
            return False
    return True


def _map_statement(node: Statement, starts: dict[int, int]) -> None:
    """Fill ``starts`` for one statement (or except handler, or match case) and its children."""
    first = first_line(node)
    if isinstance(node, ast.match_case):
        # Any: nodes that have positions (see hasattr below), a thing ast.AST does not declare.
        header_nodes: list[Any] = [node.pattern] + ([node.guard] if node.guard else [])
    else:
        header_nodes = [
            child
            for field, value in ast.iter_fields(node)
            if field not in BLOCK_FIELDS
            for child in (value if isinstance(value, list) else [value])
            if isinstance(child, ast.AST) and hasattr(child, "end_lineno")
        ]
    blocks = [getattr(node, field) for field in BLOCK_FIELDS if getattr(node, field, None)]
    if not blocks:
        # A simple statement (every compound one, except handlers and cases too, has a block).
        assert isinstance(node, ast.stmt) and node.end_lineno is not None
        for line in range(first, node.end_lineno + 1):
            starts[line] = first
        return
    for block in blocks:
        for child in block:
            _map_statement(child, starts)
    # The header: up to the line before the first child, and at least to the end of the header's
    # expressions. Children are mapped first so that a header line shared with a one-line body
    # (`if (a and\n b): x = 1`) goes to the header, whose condition is what runs there first.
    body_first = min(first_line(block[0]) for block in blocks)
    header_end = max([first, body_first - 1] + [n.end_lineno for n in header_nodes])
    for line in range(first, header_end + 1):
        starts[line] = first


# ---------------------------------------------------------------------------------------------
# Values: bounded repr, literal flag, and cheap change detection


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # a huge int (ValueError), a broken __repr__, ...
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def _bounded_repr(value: Any, max_repr: int) -> tuple[str, bool]:
    """``(text, truncated)``: the repr, cut to ``max_repr`` characters when longer.

    Long lists, tuples and dicts are cut without building their whole repr (a string's repr is
    built whole: its quotes depend on all of its characters).
    """
    kind = type(value)
    # Lower bounds of the repr's length: 3 characters per sequence item ("x, "), 6 per dict item.
    if kind in (list, tuple) and 3 * len(value) > max_repr:
        return _safe_repr(value[: max_repr // 3 + 1])[:max_repr], True
    if kind is dict and 6 * len(value) > max_repr:
        head = dict(itertools.islice(value.items(), max_repr // 6 + 1))
        return _safe_repr(head)[:max_repr], True
    text = _safe_repr(value)
    if len(text) > max_repr:
        return text[:max_repr], True
    return text, False


def _literal_value(value: Any, depth: int = 0) -> bool:
    """``factory.literals.is_literal`` without building and parsing a repr (same answers).

    Given exact built-in types, finite floats and bounded depth, ``literal_eval(repr(v))``
    rebuilds ``v`` for every literal type except ``frozenset`` (its repr is a call). The tests
    check that both functions agree.
    """
    kind = type(value)
    if depth > 50:
        return False
    if kind in _EQ_IS_REPR:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is complex:
        return math.isfinite(value.real) and math.isfinite(value.imag)
    if kind is list or kind is tuple or kind is set:
        if depth < 50 and set(map(type, value)) <= _EQ_IS_REPR:
            return True
        return all(_literal_value(item, depth + 1) for item in value)
    if kind is dict:
        if depth < 50 and set(map(type, value)) | set(map(type, value.values())) <= _EQ_IS_REPR:
            return True
        return all(_literal_value(k, depth + 1) and _literal_value(v, depth + 1) for k, v in value.items())
    return False


def _holds_set(value: Any) -> bool:
    """Whether a literal value is or holds a set (``_literal_value`` bounds its depth)."""
    kind = type(value)
    if kind is set:
        return True
    if kind is dict:
        items = [*value, *value.values()]
    elif kind is list or kind is tuple:
        items = value
    else:
        return False
    if set(map(type, items)) <= _EQ_IS_REPR:
        return False
    return any(_holds_set(item) for item in items)


def _literal(value: Any, text: str, truncated: bool) -> bool:
    """Whether a recorded value is a literal: short enough, representable, literal-shaped."""
    return not truncated and not text.startswith("<unrepresentable") and _literal_value(value)


def _fingerprint(value: Any) -> bytes | None:
    """marshal bytes of a built-in container (deep), or None when it holds other objects."""
    try:
        return marshal.dumps(value, _MARSHAL_VERSION)
    except ValueError:  # an object marshal does not know, or nested too deep
        return None


def _snapshot(value: Any, fingerprint: bytes | None = None, text: str | None = None) -> Snapshot:
    """Remember ``value`` as it is now: ``(value, memo)``.

    ``memo`` is None for immutable scalars (identity says it all), the marshal bytes for built-in
    containers (a mutated list is the same object with new bytes), else the repr.
    """
    kind = type(value)
    if kind in _ATOMS:
        return (value, None)
    if kind in _MARSHALLED:
        if fingerprint is None:
            fingerprint = _fingerprint(value)
        if fingerprint is not None:
            return (value, fingerprint)
    return (value, _safe_repr(value) if text is None else text)


# ---------------------------------------------------------------------------------------------
# The tracer


class _Frame:
    """Per-frame bookkeeping: the last raw line event (for folding) and the previous snapshot."""

    __slots__ = ("func", "class_body", "raw", "start", "lasti", "open", "snap")

    def __init__(self, code: CodeType) -> None:
        self.func = code.co_name
        # A class body (not CO_OPTIMIZED): its implicit __module__/__qualname__ are no states.
        self.class_body = not code.co_flags & _CO_OPTIMIZED
        self.raw = -1  # raw line of the last line event
        self.start = -1  # statement start of the last line event
        self.lasti = -1  # bytecode offset of the last line event
        self.open = 0  # step (1-based) whose states are still to be captured; 0 when none
        self.snap: dict[str, Snapshot] | None = None  # taken at the frame's first line event


class _Tracer:
    def __init__(
        self,
        starts: dict[int, int],
        capture: bool,
        max_steps: int,
        max_repr: int,
        max_state_bytes: int = MAX_STATE_BYTES,
    ):
        self.starts = starts
        self.capture = capture
        self.max_steps = max_steps
        self.max_repr = max_repr
        self.max_state_bytes = max_state_bytes
        self.state_limit_hit = False
        self.lines: list[int] = []
        self.funcs: list[str] = []
        # (step, var, repr, type, literal, truncated)
        self.states: list[tuple[int, str, str, str, bool, bool]] = []
        # Index in ``states`` -> canonical repr, for the literal values that are or hold a set
        # (their repr follows the hash seed; the digest compares them in canonical form).
        self.canonical: dict[int, str] = {}
        self.suspended: dict[FrameType, _Frame] = {}  # generator frames between resumes
        self.limit_hit = False

    def on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        """Global trace function: choose the frames to trace (``call`` events only)."""
        code = frame.f_code
        if code.co_filename != PROGRAM_FILENAME or code.co_name in EXPRESSION_CODE_NAMES:
            return None
        rec = self.suspended.pop(frame, None) if code.co_flags & _GENERATOR_FLAGS else None
        return self._local(rec or _Frame(code), code.co_flags & _GENERATOR_FLAGS)

    def _local(self, rec: _Frame, generator: int) -> Any:
        starts = self.starts
        lines = self.lines
        funcs = self.funcs
        capture = self.capture
        max_steps = self.max_steps

        def on_event(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                raw = frame.f_lineno
                start = starts.get(raw, raw)
                lasti = frame.f_lasti
                if start == rec.start and raw != rec.raw and lasti > rec.lasti:
                    # A continuation line of the statement execution already counted.
                    rec.raw = raw
                    rec.lasti = lasti
                    return on_event
                rec.raw = raw
                rec.start = start
                rec.lasti = lasti
                if capture:
                    try:
                        if rec.snap is None:  # the frame's first step: the arguments are the base
                            rec.snap = {name: _snapshot(v) for name, v in frame.f_locals.items()}
                        else:
                            self._capture(frame, rec)
                    except Exception as exc:
                        raise _TracerFailure(_one_line(exc)) from exc
                if len(lines) >= max_steps:
                    self.limit_hit = True
                    raise _StepLimit
                lines.append(start)
                funcs.append(rec.func)
                rec.open = len(lines)
            elif event == "return":
                if capture and rec.snap is not None:
                    try:
                        self._capture(frame, rec)
                    except Exception as exc:
                        raise _TracerFailure(_one_line(exc)) from exc
                if generator:
                    self.suspended[frame] = rec
            return on_event

        return on_event

    def _check_size(self, fingerprint: bytes) -> None:
        """End the trace (``state_too_large``) when a value's fingerprint passes the limit."""
        if len(fingerprint) > self.max_state_bytes:
            self.state_limit_hit = True
            raise _StateLimit

    def _capture(self, frame: FrameType, rec: _Frame) -> None:
        """Record the variables of ``frame`` that changed since its last snapshot."""
        step = rec.open
        rec.open = 0
        snap = rec.snap
        assert snap is not None
        local_vars = frame.f_locals
        max_repr = self.max_repr
        states = self.states
        class_body = rec.class_body
        dumps = marshal.dumps
        for name, value in local_vars.items():
            entry = snap.get(name)
            if entry is not None:
                old, memo = entry
                if old is value and memo is None:
                    continue  # the commonest case by far: an unchanged scalar
            if class_body and name[:2] == "__" == name[-2:]:
                continue
            kind = type(value)
            fingerprint = None
            if entry is not None:
                if memo is None:  # a scalar (its identity is checked above)
                    if kind in _EQ_IS_REPR and kind is type(old) and value == old:
                        continue
                    if kind is type(old) and kind not in _EQ_IS_REPR and repr(value) == repr(old):
                        continue  # floats and complex: 0.0 == -0.0 but their reprs differ
                elif type(memo) is bytes:
                    if kind in _MARSHALLED:
                        try:  # _fingerprint, inlined: this runs for every container at every step
                            fingerprint = dumps(value, _MARSHAL_VERSION)
                        except ValueError:
                            fingerprint = None
                        if fingerprint == memo:
                            continue
                        if fingerprint is not None:
                            self._check_size(fingerprint)
                elif kind is type(old) and _safe_repr(value) == memo:
                    continue
            if kind in _EQ_IS_REPR and (kind in _UNSIZED or len(value) <= max_repr):
                # Fast path for the common scalars: int, bool, None, short str and bytes.
                snap[name] = (value, None)
                if step:
                    try:
                        text = repr(value)
                    except ValueError:  # an int too long to print
                        text = "<unrepresentable int>"
                    if len(text) > max_repr:
                        states.append((step, name, text[:max_repr], kind.__name__, False, True))
                    else:
                        literal = text[0] != "<"
                        states.append((step, name, text, kind.__name__, literal, False))
                continue
            if fingerprint is not None and len(value) * 3 <= max_repr:
                # A short built-in container whose fingerprint is already known.
                snap[name] = (value, fingerprint)
                if step:
                    text = _safe_repr(value)
                    truncated = len(text) > max_repr
                    if truncated:
                        text = text[:max_repr]
                    literal = _literal(value, text, truncated)
                    if not literal:
                        text = _ADDRESS.sub(" at 0x…", text)
                    elif _holds_set(value):
                        self.canonical[len(states)] = canonical_repr(value)
                    states.append((step, name, text, kind.__name__, literal, truncated))
                continue
            text, truncated = _bounded_repr(value, max_repr)
            snap[name] = entry = _snapshot(value, fingerprint, None if truncated else text)
            if type(entry[1]) is bytes:
                self._check_size(entry[1])
            if step:
                literal = _literal(value, text, truncated)
                if not literal:
                    # Addresses differ between runs; they are no part of a value.
                    text = _ADDRESS.sub(" at 0x…", text)
                elif _holds_set(value):
                    self.canonical[len(states)] = canonical_repr(value)
                states.append((step, name, text, kind.__name__, literal, truncated))
        if len(snap) != len(local_vars):  # a `del`: forget it, so that a new binding is new
            for name in [n for n in snap if n not in local_vars]:
                del snap[name]


# ---------------------------------------------------------------------------------------------
# Public API


def trace_call(
    source: str,
    entry: str,
    args: str,
    *,
    capture: bool = True,
    max_steps: int = 20000,
    max_repr: int = 500,
    eval_args: bool = False,
    quiet: bool = True,
    max_state_bytes: int = MAX_STATE_BYTES,
) -> dict[str, Any]:
    """Run ``entry(<args>)`` from ``source`` under the line tracer and return the trace.

    The result is the JSON of ``execverify trace --json``: ``status`` (``ok``,
    ``error:<Type>``, ``recursion``, ``too_many_steps``, ``state_too_large``, ``non_literal``,
    ``bad_program``, and
    rarely ``memory``, ``output_too_long`` or ``tracer_error``; see semantics.md),
    ``output_repr``, ``output_type``, ``steps`` (``step``, ``line``, ``func``), ``states``
    (``step``, ``var``, ``repr``, ``type``, ``literal``, ``truncated``; empty when ``capture`` is
    False) and ``error`` (a one-line message, None when ok). Steps and states recorded before an
    error or the step limit are kept. Raises UserError when ``args`` are not literals or a limit
    is not a positive int.

    ``eval_args=True`` takes ``args`` as argument *expressions* evaluated, untraced, in the
    program's namespace, as CRUXEval's harness does (``dict(a=1)``, ``xs[:]`` with ``xs`` a global
    of the program, keyword arguments). Our own cases are literals and never need it.
    ``quiet`` discards the program's stdout during the run (the sandbox worker has its own sink).
    """
    return _with_lists(
        *_traced(
            source,
            entry,
            args,
            capture,
            max_steps,
            max_repr,
            eval_args=eval_args,
            quiet=quiet,
            max_state_bytes=max_state_bytes,
        )
    )


def _traced(
    source: str,
    entry: str,
    args: str,
    capture: bool,
    max_steps: int,
    max_repr: int,
    *,
    eval_args: bool,
    quiet: bool,
    max_state_bytes: int = MAX_STATE_BYTES,
    shipped: bytes | None = None,
    one_line: bool | None = None,
) -> tuple[dict[str, Any], _Tracer | None]:
    """``trace_call``'s work: its result with ``steps`` and ``states`` still empty, and the
    tracer that holds them as tuples (None when nothing ran). The job kinds digest and encode
    the tuples directly instead of building the lists of dicts."""
    limits = (("max_steps", max_steps), ("max_repr", max_repr), ("max_state_bytes", max_state_bytes))
    for name, value in limits:
        if type(value) is not int or value < 1:
            raise UserError(f"{name} must be a positive int, got {value!r}")
    arg_values: tuple[Any, ...] | None = None
    if not eval_args:
        arg_values = parse_args(args)
    try:
        code, starts = _prepare(source, shipped, one_line)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        return _result("bad_program", error=_one_line(exc)), None
    tracer = _Tracer(starts, capture, max_steps, max_repr, max_state_bytes)
    if not quiet:
        return _run(code, entry, args, arg_values, tracer), tracer
    stdout = sys.stdout
    sys.stdout = _NULL_SINK
    try:
        return _run(code, entry, args, arg_values, tracer), tracer
    finally:
        sys.stdout = stdout


def _with_lists(result: dict[str, Any], tracer: _Tracer | None) -> dict[str, Any]:
    """``result`` with the tracer's steps and states as the lists of dicts of ``trace_call``."""
    if tracer is not None:
        result["steps"] = [
            {"step": i, "line": line, "func": func}
            for i, (line, func) in enumerate(zip(tracer.lines, tracer.funcs, strict=True), 1)
        ]
        result["states"] = [
            {"step": s, "var": v, "repr": r, "type": t, "literal": lit, "truncated": cut}
            for s, v, r, t, lit, cut in tracer.states
        ]
    return result


def _run(
    code: CodeType, entry: str, args: str, arg_values: tuple[Any, ...] | None, tracer: _Tracer
) -> dict[str, Any]:
    """Load the program (untraced), call the entry under ``tracer`` and build the result."""
    namespace: dict[str, Any] = {"__name__": "__program__", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module level raised: the program cannot be loaded
        return _result("bad_program", error=_one_line(exc))
    kwargs: dict[str, Any] = {}
    if arg_values is None:
        try:
            arg_values, kwargs = _eval_args(args, namespace)
        except Exception as exc:
            raise UserError(f"args do not evaluate: {args[:200]!r} ({_one_line(exc)})") from None
    function = namespace.get(entry)
    if not callable(function):
        return _result("bad_program", error=f"no function {entry!r} in the program")

    hook = tracer.on_call  # one bound method, so that `is` can tell whether it is still set
    previous = sys.gettrace()
    status, error, output = "ok", None, None
    try:
        sys.settrace(hook)
        try:
            output = function(*arg_values, **kwargs)
        finally:
            lost = sys.gettrace() is not hook
            sys.settrace(previous)
    except _StepLimit:
        status = "too_many_steps"
    except _StateLimit:
        status = "state_too_large"
    except _TracerFailure as exc:
        status, error = "tracer_error", str(exc)
    except RecursionError as exc:
        status, error = "recursion", _one_line(exc)
    except MemoryError:
        status = "memory"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from the program is an error of the program too
        status, error = _status_of(exc), _one_line(exc)
    if tracer.limit_hit:  # even when the program swallowed the _StepLimit
        status, error = "too_many_steps", None
    elif tracer.state_limit_hit:
        status, error = "state_too_large", None
    elif status == "ok" and lost:
        # The trace function died (a RecursionError inside it, caught by the program).
        status, error = "recursion", "the tracer was switched off during the run"

    output_repr = output_type = None
    if status == "ok":
        output_repr = _safe_repr(output)
        output_type = type(output).__name__
        if not _literal(output, output_repr, False):
            status = "non_literal"
            output_repr = _ADDRESS.sub(" at 0x…", output_repr)
    return _result(
        status,
        output_repr=output_repr,
        output_type=output_type,
        error=error,
    )  # steps and states stay in the tracer (see _with_lists)


def _result(
    status: str,
    *,
    output_repr: str | None = None,
    output_type: str | None = None,
    steps: list[dict[str, Any]] | None = None,
    states: list[dict[str, Any]] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    return {
        "status": status,
        "output_repr": output_repr,
        "output_type": output_type,
        "steps": steps or [],
        "states": states or [],
        "error": error,
    }


def trace_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Worker-pool entry point (job kind ``trace``): ``trace_call`` on a payload dict.

    ``payload`` holds ``source``, ``entry``, ``args`` and optionally ``capture``, ``max_steps``,
    ``max_repr``, ``max_state_bytes``, ``eval_args``, ``code`` (the program compiled by the
    parent: ``factory.program_code.portable_code``) and ``one_line`` (the parent's
    ``one_line_statements`` of the source). Bad args give status ``bad_args`` instead of raising.
    The program's stdout is left as the caller set it (the worker's bounded sink).
    """
    return _with_lists(*_job(payload))


def _job(payload: dict[str, Any]) -> tuple[dict[str, Any], _Tracer | None]:
    """``trace_job`` with the steps and states left in the tracer (see ``_traced``)."""
    try:
        result, tracer = _traced(
            payload["source"],
            payload.get("entry", "f"),
            payload.get("args", ""),
            payload.get("capture", True),
            payload.get("max_steps", 20000),
            payload.get("max_repr", 500),
            eval_args=payload.get("eval_args", False),
            quiet=False,  # the worker already points stdout at its bounded sink
            max_state_bytes=payload.get("max_state_bytes", MAX_STATE_BYTES),
            shipped=payload.get("code"),
            one_line=payload.get("one_line"),
        )
    except UserError as exc:
        return _result("bad_args", error=str(exc)), None
    if result["status"] == "memory":
        result["retire"] = True  # the worker exits after this job: its heap may be fragmented
    return result, tracer


def trace_digest(trace: dict[str, Any]) -> str:
    """A digest of a trace's steps and states, equal for two runs exactly when their traces agree
    under the determinism rule of docs/design.md §4: the same steps, and states with the same variable,
    type and value, values of sets compared as sets (a literal that may hold a set is hashed in
    ``canonical_repr`` form, set elements sorted); every other value by its repr."""
    steps, states = trace["steps"], trace["states"]
    return _digest(
        [s["line"] for s in steps],
        [s["func"] for s in steps],
        [(s["step"], s["var"], s["repr"], s["type"], s["literal"], s.get("truncated")) for s in states],
    )


def _digest(
    lines: list[int],
    funcs: list[str],
    states: list[tuple[Any, ...]],
    canonical: dict[int, str] | None = None,
) -> str:
    """``trace_digest`` of a trace given as the tracer keeps it: parallel ``lines`` and ``funcs``
    of the steps, and states as (step, var, repr, type, literal, truncated) tuples. ``canonical``:
    the tracer's canonical reprs of the values that hold sets (by state index); without it,
    literals that may hold one are parsed back from their repr."""
    parts = [f"{line}\0{func}" for line, func in zip(lines, funcs, strict=True)]
    parts.append("\1")
    for index, (step, var, text, type_name, literal, _truncated) in enumerate(states):
        if canonical is not None:
            text = canonical.get(index, text)
        elif literal and type_name in _MAY_HOLD_SETS and "{" in text:
            try:
                text = canonical_repr(literal_eval(text))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
        parts.append(f"{step}\0{var}\0{type_name}\0{text}")
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_MAY_HOLD_SETS = frozenset({"set", "list", "tuple", "dict"})


def trace_digest_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``trace_digest``: ``trace_job`` without the trace, only its ``digest`` (the second
    hash seed's run of the trace stage; comparing digests is comparing traces). The digest is
    taken from the tracer's tuples: no list of dicts is built."""
    result, tracer = _job(payload)
    if result["status"] != "ok" or tracer is None:
        return _summary(result, None)
    return _summary(result, _digest(tracer.lines, tracer.funcs, tracer.states, tracer.canonical))


def trace_row_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``trace_row``: ``trace_job`` with the trace as the trace stage stores it (``trace``:
    compact JSON of status, output, steps and states), its ``digest``, ``trace_length`` and
    ``n_states``, instead of the lists (one string crosses the pipe)."""
    result, tracer = _job(payload)
    if result["status"] != "ok" or tracer is None:
        return _summary(result, None)
    out = _summary(result, _digest(tracer.lines, tracer.funcs, tracer.states, tracer.canonical))
    out["trace"] = stored_json(result, tracer)
    out["trace_length"] = len(tracer.lines)
    out["n_states"] = len(tracer.states)
    return out


def stored_json(result: dict[str, Any], tracer: _Tracer) -> str:
    """The stored trace: ``json.dumps`` of status, output, steps and states with separators
    ``(",", ":")``, written directly from the tracer's tuples.

    Byte-identical to ``json.dumps`` of the dicts (strings go through the same C escaper that
    ``json.dumps`` uses, ints and bools are written as it writes them; a test compares the two)
    and about three times faster, because no dict is built per step and per state.
    """
    esc = _json_str
    funcs = {name: esc(name) for name in set(tracer.funcs)}
    steps = ",".join(
        [
            f'{{"step":{i},"line":{line},"func":{funcs[func]}}}'
            for i, (line, func) in enumerate(zip(tracer.lines, tracer.funcs, strict=True), 1)
        ]
    )
    states = ",".join(
        [
            f'{{"step":{step},"var":{esc(var)},"repr":{esc(text)},"type":{esc(kind)},'
            f'"literal":{_JSON_BOOL[literal]},"truncated":{_JSON_BOOL[truncated]}}}'
            for step, var, text, kind, literal, truncated in tracer.states
        ]
    )
    head = ",".join(
        f'"{key}":{"null" if result[key] is None else esc(result[key])}'
        for key in ("status", "output_repr", "output_type")
    )
    return f'{{{head},"steps":[{steps}],"states":[{states}]}}'


# json.dumps' own string escaper (ensure_ascii=True), so that stored_json writes what it writes.
_json_str = json.encoder.encode_basestring_ascii
_JSON_BOOL = {True: "true", False: "false"}


def _summary(result: dict[str, Any], digest: str | None) -> dict[str, Any]:
    """A trace result without its steps and states, with ``digest``."""
    keys = ("status", "output_repr", "output_type", "error")
    out: dict[str, Any] = {k: result[k] for k in keys if k in result}
    out["digest"] = digest
    if result.get("retire"):
        out["retire"] = True
    return out


def _collect(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


def _eval_args(args: str, namespace: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Evaluate argument expressions (``eval_args=True``) in the program's namespace, untraced.

    Compiled as ``"<args>"`` (never traced); keyword arguments are accepted, as in CRUXEval.
    """
    code = compile(f"__collect__({args}\n)", ARGS_FILENAME, "eval", dont_inherit=True)
    namespace["__collect__"] = _collect
    try:
        return eval(code, namespace)
    finally:
        del namespace["__collect__"]


def _status_of(exc: BaseException) -> str:
    # The sandbox worker's bounded stdout raises OutputLimitExceeded (a BaseException); its status
    # there is output_too_long. Matched by name: the tracer imports nothing from the sandbox.
    if type(exc).__name__ == "OutputLimitExceeded":
        return "output_too_long"
    return f"error:{type(exc).__name__}"


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()
    return text[0][:300] if text else type(exc).__name__
