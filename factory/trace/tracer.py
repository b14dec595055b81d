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

The tracer is a plain in-process function (``trace_call``); the worker-pool job kinds built on it
are in ``factory.trace.jobs``. Around it: ``statements`` (which statement a line belongs to),
``values`` (bounded reprs, literal flags, change detection) and ``stored`` (a trace's stored JSON
and digest). It imports only the standard library and small modules (``factory.literals``,
``factory.program_code``, the trusted worker's building blocks, this package), so that a worker
loads it fast; its default limits come from ``factory.params.TraceParams``, loaded only when a
caller leaves a limit out.
"""

from __future__ import annotations

import builtins
import functools
import marshal
import sys
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

from factory.errors import UserError
from factory.literals import canonical_repr, parse_args
from factory.program_code import PROGRAM_FILENAME, program_code
from factory.sandbox.trusted.worker import PROGRAM_MODULE_NAME, args_code, collect_args, short_text, status_of
from factory.trace.source import parse_program
from factory.trace.statements import one_line_statements, starts_of
from factory.trace.values import (
    ADDRESS,
    EQ_IS_REPR,
    MARSHAL_VERSION,
    MARSHALLED,
    UNSIZED,
    Snapshot,
    bounded_repr,
    holds_set,
    recorded_literal,
    safe_repr,
    snapshot,
)

if TYPE_CHECKING:
    from factory.params import TraceParams

#: Code objects whose frames are part of an expression: never steps, never states.
EXPRESSION_CODE_NAMES = frozenset({"<lambda>", "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})

_CO_OPTIMIZED = 0x1
_GENERATOR_FLAGS = 0x20 | 0x100 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


class _StepLimit(BaseException):
    """Raised inside the program when the step budget is spent (BaseException: rarely caught)."""


class _StateLimit(BaseException):
    """Raised inside the program when a variable's value outgrows ``max_state_bytes``."""


#: A value whose marshal fingerprint passes ``max_state_bytes`` ends the trace (``state_too_large``):
#: watching it for changes at every step would cost more than the whole rest of the trace, and a
#: value that large is never asked about (its repr is far past ``max_repr``). This is the default
#: of ``trace_payloads`` in ``factory.trace.stage`` only; ``TraceParams.max_state_bytes`` is the
#: default everywhere else.
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
    return program_code(tree, shipped), starts_of(tree)


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


class Tracer:
    """The trace functions of one traced call and what they recorded: per step its statement's
    line (``lines``) and function (``funcs``), the changed variables as ``states`` tuples, and the
    canonical reprs of the literal values that hold sets (``canonical``)."""

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
                            rec.snap = {name: snapshot(v) for name, v in frame.f_locals.items()}
                        else:
                            self._capture(frame, rec)
                    except Exception as exc:
                        raise _TracerFailure(error_text(exc)) from exc
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
                        raise _TracerFailure(error_text(exc)) from exc
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
                    if kind in EQ_IS_REPR and kind is type(old) and value == old:
                        continue
                    if kind is type(old) and kind not in EQ_IS_REPR and repr(value) == repr(old):
                        continue  # floats and complex: 0.0 == -0.0 but their reprs differ
                elif type(memo) is bytes:
                    if kind in MARSHALLED:
                        try:  # _fingerprint, inlined: this runs for every container at every step
                            fingerprint = dumps(value, MARSHAL_VERSION)
                        except ValueError:
                            fingerprint = None
                        if fingerprint == memo:
                            continue
                        if fingerprint is not None:
                            self._check_size(fingerprint)
                elif kind is type(old) and safe_repr(value) == memo:
                    continue
            if kind in EQ_IS_REPR and (kind in UNSIZED or len(value) <= max_repr):
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
                    text = safe_repr(value)
                    truncated = len(text) > max_repr
                    if truncated:
                        text = text[:max_repr]
                    literal = recorded_literal(value, text, truncated)
                    if not literal:
                        text = ADDRESS.sub(" at 0x…", text)
                    elif holds_set(value):
                        self.canonical[len(states)] = canonical_repr(value)
                    states.append((step, name, text, kind.__name__, literal, truncated))
                continue
            text, truncated = bounded_repr(value, max_repr)
            snap[name] = entry = snapshot(value, fingerprint, None if truncated else text)
            if type(entry[1]) is bytes:
                self._check_size(entry[1])
            if step:
                literal = recorded_literal(value, text, truncated)
                if not literal:
                    # Addresses differ between runs; they are no part of a value.
                    text = ADDRESS.sub(" at 0x…", text)
                elif holds_set(value):
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
    max_steps: int | None = None,
    max_repr: int | None = None,
    eval_args: bool = False,
    quiet: bool = True,
    max_state_bytes: int | None = None,
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
    is not a positive int. A limit left out (None) is ``TraceParams``' default.

    ``eval_args=True`` takes ``args`` as argument *expressions* evaluated, untraced, in the
    program's namespace, as CRUXEval's harness does (``dict(a=1)``, ``xs[:]`` with ``xs`` a global
    of the program, keyword arguments). Our own cases are literals and never need it.
    ``quiet`` discards the program's stdout during the run (the sandbox worker has its own sink).
    """
    if max_steps is None or max_repr is None or max_state_bytes is None:
        defaults = _default_params()
        max_steps = defaults.max_steps if max_steps is None else max_steps
        max_repr = defaults.max_repr if max_repr is None else max_repr
        max_state_bytes = defaults.max_state_bytes if max_state_bytes is None else max_state_bytes
    return with_lists(
        *traced(
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


@functools.cache
def _default_params() -> TraceParams:
    """The default trace params (pydantic is loaded only when a caller leaves a limit out: a
    sandbox worker never does, its payloads carry their limits)."""
    from factory.params import TraceParams

    return TraceParams()


def traced(
    source: str,
    entry: str,
    args: str,
    capture: bool,
    max_steps: int,
    max_repr: int,
    *,
    eval_args: bool,
    quiet: bool,
    max_state_bytes: int,
    shipped: bytes | None = None,
    one_line: bool | None = None,
) -> tuple[dict[str, Any], Tracer | None]:
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
        return trace_result("bad_program", error=error_text(exc)), None
    tracer = Tracer(starts, capture, max_steps, max_repr, max_state_bytes)
    if not quiet:
        return _run(code, entry, args, arg_values, tracer), tracer
    stdout = sys.stdout
    sys.stdout = _NULL_SINK
    try:
        return _run(code, entry, args, arg_values, tracer), tracer
    finally:
        sys.stdout = stdout


def with_lists(result: dict[str, Any], tracer: Tracer | None) -> dict[str, Any]:
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
    code: CodeType, entry: str, args: str, arg_values: tuple[Any, ...] | None, tracer: Tracer
) -> dict[str, Any]:
    """Load the program (untraced), call the entry under ``tracer`` and build the result."""
    namespace: dict[str, Any] = {"__name__": PROGRAM_MODULE_NAME, "__builtins__": builtins}
    try:
        exec(code, namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module level raised: the program cannot be loaded
        return trace_result("bad_program", error=error_text(exc))
    kwargs: dict[str, Any] = {}
    if arg_values is None:
        try:
            # Compiled as ARGS_FILENAME (never traced); keyword arguments are accepted, as in CRUXEval.
            arg_values, kwargs = collect_args(args_code(args), namespace)
        except Exception as exc:
            raise UserError(f"args do not evaluate: {args[:200]!r} ({error_text(exc)})") from None
    function = namespace.get(entry)
    if not callable(function):
        return trace_result("bad_program", error=f"no function {entry!r} in the program")

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
        status, error = "recursion", error_text(exc)
    except MemoryError:
        status = "memory"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from the program is an error of the program too
        status, error = status_of(exc), error_text(exc)
    if tracer.limit_hit:  # even when the program swallowed the _StepLimit
        status, error = "too_many_steps", None
    elif tracer.state_limit_hit:
        status, error = "state_too_large", None
    elif status == "ok" and lost:
        # The trace function died (a RecursionError inside it, caught by the program).
        status, error = "recursion", "the tracer was switched off during the run"

    output_repr = output_type = None
    if status == "ok":
        output_repr = safe_repr(output)
        output_type = type(output).__name__
        if not recorded_literal(output, output_repr, False):
            status = "non_literal"
            output_repr = ADDRESS.sub(" at 0x…", output_repr)
    return trace_result(
        status,
        output_repr=output_repr,
        output_type=output_type,
        error=error,
    )  # steps and states stay in the tracer (see with_lists)


def trace_result(
    status: str,
    *,
    output_repr: str | None = None,
    output_type: str | None = None,
    steps: list[dict[str, Any]] | None = None,
    states: list[dict[str, Any]] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """A result as ``trace_call`` returns it."""
    return {
        "status": status,
        "output_repr": output_repr,
        "output_type": output_type,
        "steps": steps or [],
        "states": states or [],
        "error": error,
    }


def error_text(exc: BaseException) -> str:
    """A trace's ``error``: the exception's ``short_text`` up to its first line break."""
    return short_text(exc).splitlines()[0]
