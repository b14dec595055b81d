"""The ``Language`` interface: everything that differs between programming languages (docs/languages.md).

One object per language. The synthesize stage reaches the language only through it: the grammar
loader checks templates and constants with it, the generator fills templates and renders the
program tree (``factory.languages.nodes``) with it, and the tier check reads programs through its
``TierSyntax`` (a tree-sitter parser and the node kinds the check looks at). The later stages
reach it through the stage's ``language`` argument: the execute and trace stages run programs
with its job kinds and compare outputs with its value model, the tasks stage reads programs with
its statement ``Analysis`` and names it in prompts, the scorer parses and compares answers with
its value model (docs/languages.md says what still assumes Python).
"""

from __future__ import annotations

import ast
import importlib
import keyword
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from factory.errors import UserError

if TYPE_CHECKING:  # only annotations: importing the registry does not import tree-sitter
    from tree_sitter import Node

    from factory.grammar.types import Type as GrammarType
    from factory.languages.nodes import Program

#: An operation's shape as the tier check sees it: ("method", "pop"), ("binop", "+"), ("index",) ...
Signature = tuple


@dataclass(frozen=True)
class NodeKinds:
    """The tree-sitter node kinds (and fields) that the language-neutral part of the tier check
    reads: program shape, nesting depth, statements per line."""

    function: str  # a function definition, with fields ``name`` and ``body``
    imports: frozenset[str]  # top-level statements that import a module
    compound: frozenset[str]  # the control flow that nests: if, for, while
    block: str  # the body of a compound statement (its statements are one level deeper)
    same_depth: frozenset[str]  # clauses at their statement's own depth (elif, else; an else holding an if)
    definitions: frozenset[str]  # nested definitions, which are never generated (def, class, lambda)
    while_loop: str
    call: str  # a call, with field ``function``
    statement_suffix: str | tuple[str, ...]  # the kinds ending so are statements (str.endswith)
    statement_parents: frozenset[str]  # what a statement of its own line sits in (block, module)


@dataclass(frozen=True)
class CoreTypes:
    """The names of the grammar types the generator itself needs, by role: what a test gives
    (conditions are operations returning it), what its loop counters are, and the container an
    extra input of an element type goes in."""

    boolean: str
    integer: str
    sequence: str


class TierSyntax(ABC):
    """How the tier check reads a program of the language: the parser and what is not a node kind
    (operation shapes, bounded loops)."""

    kinds: NodeKinds
    #: The shapes the rendered ``CountedLoop`` header shows the check (``range(n)``: a call).
    counted_loop_shapes: frozenset[Signature]

    @abstractmethod
    def parse(self, source: str) -> Node:
        """The tree-sitter root node of ``source``."""

    @abstractmethod
    def signatures(
        self, node: Node, local_functions: frozenset[str], literals: frozenset[str]
    ) -> list[Signature]:
        """Operation shapes under ``node`` in pre-order; calls of ``local_functions`` are not
        operations, nor are ``literals`` (texts that are constants although they parse as calls)."""

    @abstractmethod
    def template_signatures(self, template: str, statement: bool) -> tuple[Signature, frozenset[Signature]]:
        """(the key shape, all shapes) of an operation template: how the check recognises it."""

    @abstractmethod
    def while_bounded(self, loop: Node) -> bool:
        """Whether a while loop is bounded the way the generator bounds one (a counter that only
        the last statement of the body increments)."""


class StatementLine(NamedTuple):
    """What a program's source says about the statement that starts on one line (a named tuple: a
    program has a few dozen and they are made for every new program, so construction counts)."""

    line: int
    kind: str  # if, while, for, try, except, case, with, match, return, def, ..., simple
    func: str  # the innermost enclosing function
    conditional: bool  # inside an if/loop/try/except/match body of its function
    first_in_function: bool  # the first statement of its function's body
    assigns: tuple[str, ...]  # names bound by the statement itself (targets, loop variables)
    names: tuple[str, ...]  # names the statement reads
    calls: tuple[str, ...]  # names of the functions it calls by simple name
    constant: bool  # `v = <literal>`: its state answer needs no reasoning
    local_names: frozenset[str] = frozenset()  # the function's params and locals


class Analysis(Protocol):
    """Statement analysis of a program's source, as the tasks stage reads it (Python's is the
    module ``factory.tasks.analysis``). Each raises SyntaxError (or ValueError) when the source
    does not parse, except ``has_multiline_statement``."""

    def statement_info(self, source: str) -> Mapping[int, StatementLine]:
        """The lines that start a statement a trace can reach (shared: callers must not modify it)."""
        ...

    def program_features(self, source: str) -> dict[str, Any]:
        """The static features an item carries (``n_lines``, ``n_loops``, ``n_branches``,
        ``has_helper``, ``max_depth``): a fresh dict each call."""
        ...

    def has_multiline_statement(self, source: str) -> bool:
        """Whether a statement's header spans several lines (the prompt then says how such
        statements are numbered); False when the source does not parse."""
        ...

    def branch_tests(self, source: str) -> Sequence[int]:
        """The lines of the two-way tests (Python: ``if`` and ``elif``) in the program's functions."""
        ...

    def removal_variants(self, source: str) -> Sequence[tuple[int, str]]:
        """(first line, source) per statement that may be removed (simple statements, compound
        ones whole; never a return or a definition), in source order: the program without it,
        every other line where it was (the quality checks run these variants)."""
        ...

    def once_variants(self, source: str) -> Sequence[tuple[int, str]]:
        """(first line, source) per loop bounded by a literal count above 1 (Python: ``for _ in
        range(3)``, ``while count < 3``), in source order: the program with that count set to 1,
        every line where it was (the ``idle_repetition`` check runs these variants)."""
        ...

    def passthrough_variants(self, source: str) -> Sequence[tuple[int, str]]:
        """(first line, source) per (assignment ``name = value`` in a function, variable the value
        reads), in source order: the program with that value replaced by the variable, every
        other line where it was (the ``inert_operation`` check runs these variants)."""
        ...

    def negated_tests(self, source: str) -> Sequence[tuple[int, str]]:
        """(first line, source) per two-way test on one line (those of ``branch_tests``), in source
        order: the program with that test negated, every line where it was (the
        ``irrelevant_test`` check runs these variants)."""
        ...


#: An answer's expected value that is not a literal (``Assertion.expected``).
NO_VALUE: Any = object()


class Assertion(NamedTuple):
    """An output or input answer line read back (the ``prompts`` facet's ``read_assertion``): the
    values of the entry call's arguments (None when one is not a literal) and the expected value
    (``NO_VALUE`` when it is not a literal)."""

    args: tuple[Any, ...] | None
    expected: Any


@dataclass(frozen=True)
class PromptExample:
    """The format-only example of a language's prompts (``factory.tasks.prompts``): a fixed tiny
    program, a call, and per question family the questions it may ask and the reasoning line of
    each (the example takes as many of each family, in the item's order)."""

    source: str
    entry: str
    args: str
    questions: Mapping[str, Sequence[Mapping[str, Any]]]
    why: Mapping[str, Sequence[str]]


class Language(ABC):
    """One programming language: the grammar folder's ``language`` key names it."""

    name: str  # the registry key, as a grammar folder names it
    display_name: str  # how people call it: error messages, prompts ("Python")
    tier_syntax: TierSyntax
    #: The grammar's type names by role (Python's: ``bool``, ``int``, ``list``).
    core_types: CoreTypes = CoreTypes(boolean="bool", integer="int", sequence="list")
    #: The file name endings of its programs (``.py``): the command line picks the language of a
    #: program file by them (``factory.languages.language_of_file``).
    file_suffixes: tuple[str, ...] = ()
    #: Whether a program's steps can depend on the process's hash seed (Python: the iteration
    #: order of a set of strings). The trace stage traces a case under both seeds only when they
    #: can; otherwise once, on every core (the execute stage's two runs still check its output).
    hash_seed_matters: bool = True

    # --- grammar checks (the loader) --------------------------------------------------------------
    @abstractmethod
    def template_error(self, text: str, *, statement: bool) -> str | None:
        """Why ``text`` (a template whose placeholders are filled with names) is not an expression
        (a statement when ``statement``) of the language; None when it is one."""

    # --- the value model ------------------------------------------------------------------------
    @abstractmethod
    def literal_value(self, text: str) -> Any:
        """The value a literal text denotes; ValueError, SyntaxError or TypeError when the text is
        not a literal (a grammar constant, a constant the generator wrote)."""

    def answer_literal_value(self, node: ast.expr, line: str) -> Any:
        """The value of a literal the scorer found in an answer's ``assert`` line, which it reads
        with Python's ``ast``: ``node`` and the ``line`` it is in. By default the node's source
        text through ``literal_value``; Python reads the node itself (no second parse)."""
        if node.lineno == node.end_lineno == 1 and line.isascii():
            text: str | None = line[node.col_offset : node.end_col_offset]  # get_source_segment, fast
        else:
            text = ast.get_source_segment(line, node)
        if text is None:
            raise ValueError("no source text for the literal")
        return self.literal_value(text)

    @abstractmethod
    def literal(self, value: Any) -> str:
        """The canonical literal text of a value (independent of the hash seed)."""

    def drawn_literal(self, value: Any, t: GrammarType) -> str:
        """The literal text of a value Hypothesis drew for the grammar type ``t`` (the inputs
        stage's argument pools). By default ``literal(value)``: Python's values are drawn as they
        are; JavaScript's become its value model's by the type (a drawn set of a ``map``...)."""
        return self.literal(value)

    @abstractmethod
    def parse_args(self, text: str) -> tuple[Any, ...]:
        """The values of a call's argument text (``"[1, 2], 'ab'"``); UserError when not literals."""

    @abstractmethod
    def strict_equal(self, a: Any, b: Any) -> bool:
        """Type-aware equality of two values (``True`` is not ``1``, ``1`` is not ``1.0``)."""

    def distinct_literals_may_be_equal(self, a: str, b: str) -> bool:
        """Whether two different literal texts (``literal``'s) may still be of strictly equal
        values, so that only parsing both tells; by default always. A caller comparing many
        outputs skips the parse where the language says no."""
        return True

    # --- synthesis: writing and reading expressions -------------------------------------------
    @abstractmethod
    def fill(self, template: str, values: Mapping[str, str]) -> str:
        """``template`` with each ``{placeholder}`` replaced by the expression text of ``values``,
        parenthesised where the language's precedence needs it."""

    @abstractmethod
    def is_signed_number(self, code: str) -> bool:
        """Whether an expression is a number literal with a sign (``-7``): a constant, not a use
        of the negation operation."""

    @abstractmethod
    def constant_condition(self, code: str) -> bool:
        """Whether a condition is constant or trivially so (``x != x``, no variable at all)."""

    @abstractmethod
    def render(self, program: Program) -> str:
        """The source text of a program tree, one statement per line, ending with a newline."""

    def normalized_source(self, source: str) -> str:
        """The program's text with formatting and comments normalised away: two programs that
        differ only there give the same text (``factory.contracts.program_id`` hashes it)."""
        raise NotImplementedError(f"{self.display_name} has no normalised source")

    def derived_name(self, base: str, word: str) -> str:
        """A variable name made of a grammar name and a word (``items`` and ``new``), in the
        language's style: the generator's names when a type's are all taken. Python's (the
        default): ``items_new``."""
        return f"{base}_{word}"

    def is_function_name(self, name: str) -> bool:
        """Whether ``name`` can name a function in the language (a command's ``--entry``).
        Python's (the default): an identifier that is not a keyword."""
        return name.isidentifier() and not keyword.iskeyword(name)

    def name_error(self, name: str) -> str | None:
        """Why ``name`` may not be a variable of a program (a grammar's ``names``): not the
        language's style, a keyword, a builtin; None when it may. The loader adds what holds for
        every language (names the synthesizer writes itself, duplicates)."""
        raise NotImplementedError(f"{self.display_name} does not check names")

    # --- the later stages -----------------------------------------------------------------------
    def facet(self, name: str) -> Any:
        """What one later stage needs of the language, each in a module of its own,
        ``<the language's package>.<name>``, imported on first use: a stage depends only on the
        facets it uses (the DVC deps test follows ``facet("<name>")`` calls to those modules).

        - ``runner``: ``KINDS``, job kind -> ``"module:function"`` that runs it in a worker:
          ``run`` and ``lines`` (call a program). Every ``Executor`` has them.
        - ``tracer``: ``KINDS`` of ``trace``, ``trace_row`` and ``trace_digest`` (trace one call,
          docs/design.md §4): the trace stage's.
        - ``analysis``: an ``Analysis`` (statement lines, item features, statement removal): the
          tasks stage's and the inputs stage's (its quality checks).
        - ``source_check``: ``syntax_error(source)``, the (line, message) of a program's first
          syntax error or None: the one-program commands check a file with it before running it.
        - ``prompts``: what the prompts and the scorer say in the language (``factory.tasks.prompts``,
          ``factory.scoring.judge``): ``EXAMPLE`` (a ``PromptExample``), ``STATE_RULE`` (the state
          family's answer rule), ``assertion(call, expected)`` (the answer line of an output or
          input question) and ``read_assertion(line, entry)`` (that line read back: the call's
          argument values and the expected value, or a verdict).
        - ``untrusted``: ``call_function(source, entry, args, *, timeout_s, memory_mb)``, one call
          on argument values in the untrusted sandbox (a ``CallResult``): the scorer's input answers;
          ``run_tests(code, tests, entry, *, timeout_s, memory_mb)``, a codegen completion's tests
          (a ``TestReport``).
        - ``codegen``: a code-generation item's text (``factory.phase2.items``): ``FENCE`` and
          ``FENCE_TAGS`` (the answer's code fence), ``PLAIN_RULE``, ``signature``, ``type_rule``,
          ``example_test`` (a test's line), ``shown_example``, ``memorizer_source`` and
          ``same_args`` (how the memorizer tells a shown call).
        - ``normalize``: ``parse``, ``token_stream``, ``program_key``, ``ast_keys`` for dedup and
          decontamination: the inputs stage's near-duplicate key (not routed yet in the assemble
          stage, which imports Python's).
        - ``quality``: ``KINDS``, the job kinds ``arcs`` and ``ablation`` of the inputs stage's checks
          (``factory.quality.jobs``), for the runner facet's worker.
        - ``measure``: what the quality figures (``factory.quality.measure``) run with: ``KINDS``
          (``quality``, the probe job, and ``ablation``), ``WORKER`` (the worker spec, None for
          Python's) and ``shape_args(text)``, an argument text's values as
          ``factory.quality.signature`` shapes them (to find a program's pool).

        A language without the facet's module: UserError naming the language and the facet (one
        line, exit 2 on the command line). A language defined outside a package of its own (a
        test's) overrides this."""
        module = f"{type(self).__module__}.{name}"
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise  # the facet exists; something it imports does not
            raise UserError(
                f"{self.display_name} has no {name!r} facet ({module}): this step does not run "
                f"{self.display_name} programs yet (docs/languages.md)"
            ) from None
