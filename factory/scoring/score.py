"""Item-level scoring: the one function that rewards, the difficulty filter and evaluation call.

Rewards (docs/design.md §5):
- white_box: ``R = 2·((1−α)·R_io + α·R_wb)``; R_io is 1 when the output answer is right, R_wb the
  fraction of the white-box (next_line and state) answers that are right. An item without
  white-box questions uses R_wb = R_io, so the scale stays [0, 2]. ``gated`` gives 0 when the
  output answer is wrong.
- output, input, next_line, state, coverage items: the fraction of questions right (one question:
  1.0 or 0.0). Input answers are judged by running the original program in the untrusted
  sandbox, except that the item's own gold arguments are right without running.
- codegen: the fraction of unit tests passed in the untrusted sandbox, run by the language's
  ``untrusted`` facet (Python: asserts run in the parent calling into the sandbox; JavaScript:
  each test's call made in the sandbox, its value compared with the expected one here), the code
  taken from the language's fences (its ``codegen`` facet's ``FENCE_TAGS``).
A completion whose answer block has fewer or more non-empty lines than there are questions (or
no block at all) scores 0 with every question ``unparsed``.

Answers are read with the value model of the item's language: the item's ``language`` field when
it has one, else the ``language`` argument (a registered name, default Python).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from factory import languages
from factory.errors import UserError
from factory.languages import Language
from factory.sandbox.os_helpers import default_workers
from factory.sandbox.untrusted.runner import SYNTAX_ERROR
from factory.scoring import judge
from factory.scoring.judge import RIGHT, UNPARSED, WRONG
from factory.scoring.parse import completion_text, extract_code, split_answers

FAMILIES = ("white_box", "output", "input", "next_line", "state", "coverage", "codegen")
QUESTION_FAMILIES = ("output", "input", "next_line", "state", "coverage")
EXECUTING_FAMILIES = ("input", "codegen")
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MEMORY_MB = 512

Completion = str | Sequence[Mapping[str, Any]]


class _ScoreOptions(TypedDict):
    """``score_item``'s keyword options, as ``score_batch`` passes them on."""

    alpha: float
    gated: bool
    timeout_s: float
    memory_mb: int
    language: str


@dataclass
class ScoreResult:
    """The reward of one completion and how each question was judged."""

    reward: float
    family: str
    per_question: list[dict[str, Any]] = field(default_factory=list)
    n_right: int = 0
    n_wrong: int = 0
    n_unparsed: int = 0
    r_io: float | None = None  # white-box items only
    r_wb: float | None = None  # white-box items only
    status: str | None = None  # the sandbox's status, for items that ran code

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Item:
    """A validated item."""

    family: str
    questions: tuple[dict[str, Any], ...]
    entry: str
    source: str
    args: tuple[Any, ...] | None  # the item's own arguments, parsed once
    tests: tuple[str, ...]
    values: Language  # the language whose value model reads and compares the answers


def _load_list(value: Any, key: str) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise UserError(f"item {key!r} is not valid JSON: {exc.msg}") from None
    if not isinstance(value, (list, tuple)):
        raise UserError(f"item {key!r} must be a list (or its JSON text)")
    return list(value)


def _prepare(item: Mapping[str, Any], language: str) -> _Item:
    """Validate an item (a dataset row); raises UserError on anything malformed. ``language``:
    the name to use when the item has no ``language`` field."""
    if not isinstance(item, Mapping):
        raise UserError("an item must be a JSON object")
    name = item.get("language") or language
    try:
        values = languages.language(name)
    except (languages.UnknownLanguage, TypeError) as exc:
        raise UserError(f"item language: {exc}") from None
    family = item.get("family")
    if family not in FAMILIES:
        raise UserError(f"unknown family {family!r} (expected one of {', '.join(FAMILIES)})")
    entry = item.get("entry")
    if not isinstance(entry, str) or not entry.isidentifier():
        raise UserError(f"item 'entry' must be a function name, got {entry!r}")
    if family == "codegen":
        if "tests" not in item:
            raise UserError("a codegen item needs 'tests'")
        tests = _load_list(item["tests"], "tests")
        if not tests or not all(isinstance(t, str) for t in tests):
            raise UserError("a codegen item's 'tests' must be a non-empty list of strings")
        return _Item(family, (), entry, "", None, tuple(tests), values)
    for key in ("source", "questions"):
        if key not in item:
            raise UserError(f"a {family} item needs {key!r}")
    source = item["source"]
    if not isinstance(source, str):
        raise UserError("item 'source' must be a string")
    questions = _load_list(item["questions"], "questions")
    if not questions:
        raise UserError("item 'questions' is empty")
    for q in questions:
        if not isinstance(q, Mapping) or q.get("family") not in QUESTION_FAMILIES:
            got = q.get("family") if isinstance(q, Mapping) else q
            raise UserError(f"unknown question family {got!r}")
        if "answer" not in q:
            raise UserError(f"a {q['family']} question needs 'answer'")
    families = [q["family"] for q in questions]
    if family == "white_box" and families[0] != "output":
        raise UserError("a white_box item's first question must be the output question")
    if family != "white_box" and set(families) != {family}:
        raise UserError(f"a {family} item must hold {family} questions only")
    args_text = item.get("args")
    if args_text is not None and not isinstance(args_text, str):
        raise UserError("item 'args' must be argument text such as \"[1, 2], 'ab'\"")
    if "output" in families and args_text is None:
        raise UserError("an item with an output question needs 'args'")
    args = None
    if args_text is not None:
        try:
            args = values.parse_args(args_text)
        except UserError:
            if "output" in families:
                raise  # the output question is about these arguments
    return _Item(family, tuple(dict(q) for q in questions), entry, source, args, (), values)


def needs_execution(item: Mapping[str, Any]) -> bool:
    """True for items whose judging runs code (input and codegen)."""
    return item.get("family") in EXECUTING_FAMILIES if isinstance(item, Mapping) else False


def score_item(
    item: Mapping[str, Any],
    completion: Completion,
    *,
    alpha: float = 0.5,
    gated: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
    language: str = "python",
) -> ScoreResult:
    """Score one completion (plain text or a conversation) against one item.

    ``language``: the registered name of the item's language, unless the item names its own.
    Raises UserError for a malformed item; a malformed completion simply scores 0.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    prepared = _prepare(item, language)
    text = completion_text(completion)
    if prepared.family == "codegen":
        return _score_codegen(prepared, text, timeout_s, memory_mb)
    lines = split_answers(text, len(prepared.questions))
    if lines is None:
        per_question = [
            {"family": q["family"], "verdict": UNPARSED, "answer": None} for q in prepared.questions
        ]
        result = ScoreResult(0.0, prepared.family, per_question)
        _count(result)
        if prepared.family == "white_box":
            result.r_io, result.r_wb = 0.0, 0.0
        return result
    status = None
    per_question = []
    for question, line in zip(prepared.questions, lines, strict=True):
        verdict, q_status = _judge(prepared, question, line, timeout_s, memory_mb)
        status = q_status or status
        per_question.append({"family": question["family"], "verdict": verdict, "answer": line})
    result = ScoreResult(0.0, prepared.family, per_question, status=status)
    _count(result)
    if prepared.family == "white_box":
        r_io = 1.0 if per_question[0]["verdict"] == RIGHT else 0.0
        wb = per_question[1:]
        r_wb = sum(q["verdict"] == RIGHT for q in wb) / len(wb) if wb else r_io
        result.r_io, result.r_wb = r_io, r_wb
        result.reward = 0.0 if gated and r_io == 0.0 else 2.0 * ((1 - alpha) * r_io + alpha * r_wb)
    else:
        result.reward = result.n_right / len(per_question)
    return result


def _count(result: ScoreResult) -> None:
    verdicts = [q["verdict"] for q in result.per_question]
    result.n_right = verdicts.count(RIGHT)
    result.n_wrong = verdicts.count(WRONG)
    result.n_unparsed = verdicts.count(UNPARSED)


def _judge(
    item: _Item, question: Mapping[str, Any], line: str, timeout_s: float, memory_mb: int
) -> tuple[str, str | None]:
    """(verdict, sandbox status or None) for one question and its answer line."""
    family = question["family"]
    gold = question["answer"]
    if family == "output":
        gold_value = judge.gold_literal(str(gold), item.values)
        return judge.judge_output(line, item.entry, item.args or (), gold_value, item.values), None
    if family == "next_line":
        try:
            gold_line = int(gold)
        except (TypeError, ValueError):
            raise UserError(f"a next_line answer must be a line number, got {gold!r}") from None
        return judge.judge_next_line(line, item.source.splitlines(), gold_line), None
    if family == "state":
        return judge.judge_state(line, str(gold), item.values), None
    if family == "coverage":
        return judge.judge_coverage(line, str(gold)), None
    return _judge_input(item, line, str(gold), timeout_s, memory_mb)


def _judge_input(
    item: _Item, line: str, gold_text: str, timeout_s: float, memory_mb: int
) -> tuple[str, str | None]:
    values = item.values
    proposed = judge.input_arguments(line, item.entry, values)
    if isinstance(proposed, str):
        return proposed, None
    gold = judge.gold_literal(gold_text, values)
    own = item.args
    # The item's own arguments are known to give the gold output: no need to run them.
    if own is not None and len(own) == len(proposed):
        if all(values.strict_equal(a, b) for a, b in zip(own, proposed, strict=True)):
            return RIGHT, None
    call = values.facet("untrusted").call_function  # the language's runs, in the untrusted sandbox
    result = call(item.source, item.entry, proposed, timeout_s=timeout_s, memory_mb=memory_mb)
    if not result.ok:
        return WRONG, result.status
    return (RIGHT if values.strict_equal(result.value, gold) else WRONG), result.status


def _score_codegen(item: _Item, text: str, timeout_s: float, memory_mb: int) -> ScoreResult:
    code = extract_code(text, item.values.facet("codegen").FENCE_TAGS)
    if not code.strip():
        report = None
    else:
        run_tests = item.values.facet("untrusted").run_tests  # the language's, in the sandbox
        report = run_tests(code, list(item.tests), item.entry, timeout_s=timeout_s, memory_mb=memory_mb)
    per_question = []
    for i, test in enumerate(item.tests):
        if report is None or report.status == SYNTAX_ERROR:
            verdict = UNPARSED
        else:
            verdict = RIGHT if report.per_test[i] else WRONG
        per_question.append({"family": "codegen", "verdict": verdict, "answer": None, "test": test})
    result = ScoreResult(0.0, "codegen", per_question, status=report.status if report else None)
    _count(result)
    result.reward = result.n_right / len(per_question)
    return result


def score_batch(
    items: Sequence[Mapping[str, Any]],
    completions: Sequence[Completion],
    *,
    alpha: float = 0.5,
    gated: bool = False,
    workers: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
    language: str = "python",
) -> list[ScoreResult]:
    """Score ``completions[i]`` against ``items[i]``; results in the same order (``language``:
    as ``score_item``).

    Execution-free items are scored in this thread; input and codegen items run in parallel,
    ``workers`` sandbox processes at a time (default: the CPUs this process may use).
    """
    if len(items) != len(completions):
        raise ValueError(f"{len(items)} items but {len(completions)} completions")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    kwargs: _ScoreOptions = {
        "alpha": alpha,
        "gated": gated,
        "timeout_s": timeout_s,
        "memory_mb": memory_mb,
        "language": language,
    }
    results: list[ScoreResult | None] = [None] * len(items)
    running = []
    for i, (item, completion) in enumerate(zip(items, completions, strict=True)):
        if needs_execution(item):
            running.append(i)
        else:
            results[i] = score_item(item, completion, **kwargs)
    if running:
        n = workers or default_workers()
        with ThreadPoolExecutor(max_workers=min(n, len(running))) as pool:
            scored = pool.map(lambda i: score_item(items[i], completions[i], **kwargs), running)
            for i, result in zip(running, scored, strict=True):
                results[i] = result
    return [r for r in results if r is not None]
