"""Task items of one traced case: white-box, output, input and coverage (docs/design.md §2, §5).

``build_items_for_case(case_row, trace, seed=..., params=...)`` turns one case (a row of the
traces table, or any dict with ``source``, ``entry`` and ``args``) and its trace into dataset
rows, one per item family in ``params.families``:

- ``white_box``: the output question first, then up to ``params.next_line`` next_line and up to
  ``params.state`` state questions (``factory.tasks.sampling``); dropped when none exists.
- ``output`` and ``input``: one question each (``input`` is judged by running the program).
- ``coverage``: up to ``params.coverage_per_item`` coverage questions, at least one NO and one
  YES when both exist; dropped when every line runs in every call (nothing to ask).

Randomness: the white-box draw uses ``random.Random(f"{seed}:{case_id}")``, the coverage draw
``random.Random(f"{seed}:{case_id}:coverage")``, so each family can be regenerated alone.
Gold answers are typed JSON (ints for lines, strings for ``value; type``, reprs for outputs);
``questions`` holds the structured questions exactly as ``factory.scoring.score_item`` reads them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Callable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from factory import languages
from factory.languages import Language
from factory.params import TasksParams
from factory.tasks.prompts import render_prompt
from factory.tasks.questions import line_text, questions_from_trace, source_lines
from factory.tasks.sampling import sample_coverage, sample_questions

ITEM_FAMILIES = ("white_box", "output", "input", "coverage")
#: Question keys kept in an item's ``questions`` (in this order), per question family.
_KEYS = {
    "output": ("family", "answer", "answer_type"),
    "input": ("family", "answer", "answer_type"),
    "next_line": ("family", "line", "occurrence", "answer", "informative", "trivial"),
    "state": ("family", "line", "occurrence", "var", "answer", "informative", "trivial"),
    "coverage": ("family", "line", "answer", "informative", "trivial"),
}


def task_id(case_id: str, family: str, questions: list[dict[str, Any]]) -> str:
    """Content hash of the case, the family and the questions (gold answers included)."""
    text = _SORTED_JSON([case_id, family, questions])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _json_encoder(*, sort_keys: bool) -> Callable[[Any], str]:
    """``json.dumps(obj, ensure_ascii=False, sort_keys=sort_keys)`` for item data: the C encoder
    made once (``json.dumps`` makes one per call) and with no check for circular references
    (item data is plain JSON, built here, with none). A private CPython detail kept for speed:
    the public ``json.JSONEncoder(check_circular=False, ...).encode`` cost 8-11% more of the item
    building's CPU (paired runs, 12 rounds, 2026-12-02)."""
    if c_make_encoder is None:  # no C accelerator
        return json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=False).encode
    encode = c_make_encoder(None, _unencodable, encode_basestring, None, ": ", ", ", sort_keys, False, True)
    return lambda obj: "".join(encode(obj, 0))


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_SORTED_JSON = _json_encoder(sort_keys=True)
_JSON = _json_encoder(sort_keys=False)


def default_case_id(source: str, entry: str, args: str) -> str:
    """A case id for a case given by hand (the CLI): hash of source, entry and args."""
    return hashlib.sha256(f"{source}\0{entry}\0{args}".encode()).hexdigest()[:16]


def _safe_text(text: str) -> bool:
    """An answer line that the answer block can hold (one line, no answer tag)."""
    return "\n" not in text and "\r" not in text and "answer>" not in text.lower()


@functools.lru_cache(maxsize=1024)
def _answer_lines(source: str) -> tuple[int, frozenset[int]]:
    """How many lines ``source`` has, and those whose text cannot be an answer line (see
    ``_safe_text``)."""
    lines = source_lines(source)  # as line_text reads them
    return len(lines), frozenset(n for n, text in enumerate(lines, 1) if not _safe_text(text.strip()))


def _literal(text: str | None, lang: Language) -> bool:
    if text is None:
        return False
    try:
        lang.literal_value(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _clean(question: Mapping[str, Any]) -> dict[str, Any]:
    keys = _KEYS[question["family"]]
    return {k: question[k] for k in keys if k in question}


def _params(params: TasksParams | Mapping[str, Any] | None) -> TasksParams:
    if params is None:
        return TasksParams()
    if isinstance(params, TasksParams):
        return params
    return TasksParams.model_validate(dict(params))


def build_items_with_reasons(
    case_row: Mapping[str, Any],
    trace: Mapping[str, Any],
    *,
    seed: int,
    params: TasksParams | Mapping[str, Any] | None = None,
    verified: bool = False,
    language: str = "python",
) -> tuple[list[dict[str, Any]], list[str]]:
    """The item rows of one case and the reasons for the items it could not give.

    A reason is ``"case:<why>"`` when the whole case gives nothing, else ``"<family>:<why>"``.
    ``verified=True`` says the case is a row of the traces table: the trace stage ran its args
    as literals (it never evaluates expressions) and gives an ``ok`` trace only for a literal
    output (the tracer's check, which agrees with ``literal_eval`` of the repr: tested), so
    neither is parsed again here. ``language``: the registered name of the program's language
    (its value model, statement analysis and name in the prompts).
    """
    p = _params(params)
    lang = languages.language(language)
    source, entry, args = case_row["source"], case_row["entry"], case_row["args"]
    if trace.get("status") != "ok":
        return [], [f"case:trace_{trace.get('status')}"]
    output_repr, output_type = trace.get("output_repr"), trace.get("output_type")
    if not output_type or not isinstance(output_repr, str) or not (verified or _literal(output_repr, lang)):
        return [], ["case:output_not_literal"]
    try:
        if not verified:
            lang.parse_args(args)
        features = lang.facet("analysis").program_features(source)
    except Exception:  # UserError (args), SyntaxError: the case is unusable
        return [], ["case:unparseable"]
    if not (_safe_text(output_repr) and _safe_text(args) and _safe_text(entry)):
        return [], ["case:answer_tag_in_text"]

    case_id = case_row.get("case_id") or default_case_id(source, entry, args)
    all_questions = questions_from_trace(
        source, dict(trace), max_occurrence=p.max_occurrence, language=language
    )
    output_q = {"family": "output", "answer": output_repr, "answer_type": output_type}

    n_lines, unsafe_lines = _answer_lines(source)

    def accept(q: Mapping[str, Any]) -> bool:
        if q["family"] == "next_line":
            line = int(q["answer"])
            if line == -1 or 1 <= line <= n_lines:
                return line not in unsafe_lines
            return _safe_text(line_text(source, line))  # raises: not a line of the program
        return _safe_text(str(q["answer"]))

    items: list[dict[str, Any]] = []
    reasons: list[str] = []
    for family in p.families:
        if family == "white_box":
            rng = random.Random(f"{seed}:{case_id}")
            nl, st = sample_questions(
                all_questions,
                rng,
                next_line=p.next_line,
                state=p.state,
                minus_one_share=p.minus_one_share,
                nil_share=p.nil_share,
                accept=accept,
                from_trace=True,
            )
            if not nl and not st:
                reasons.append("white_box:no_white_box_question")
                continue
            questions = [output_q] + [_clean(q) for q in nl + st]
        elif family == "output":
            questions = [output_q]
        elif family == "input":
            share = case_row.get("output_share")
            if share is not None and share > p.input_max_output_share:
                reasons.append("input:guessable_output")  # a random argument list would do
                continue
            questions = [{"family": "input", "answer": output_repr, "answer_type": output_type}]
        elif family == "coverage":
            rng = random.Random(f"{seed}:{case_id}:coverage")
            picked = sample_coverage(all_questions, rng, p.coverage_per_item, accept=accept, from_trace=True)
            if not picked:
                reasons.append("coverage:no_informative_line")
                continue
            questions = [_clean(q) for q in picked]
        else:  # TasksParams validates families; a plain dict may not
            raise ValueError(f"unknown item family {family!r}")
        items.append(
            _row(case_row, case_id, family, questions, trace, features, output_repr, output_type, language)
        )
    return items, reasons


def build_items_for_case(
    case_row: Mapping[str, Any],
    trace: Mapping[str, Any],
    *,
    seed: int,
    params: TasksParams | Mapping[str, Any] | None = None,
    language: str = "python",
) -> list[dict[str, Any]]:
    """The item rows of one case (one per family in ``params.families`` that has questions).

    ``case_row`` needs ``source``, ``entry`` and ``args``; ``case_id``, ``program_id``, ``tier``,
    ``target`` and ``grammar_hash`` are copied when present (a missing ``case_id`` is hashed
    from the program and its arguments). ``trace`` is the dict of ``trace_call`` with capture.
    ``language``: the registered name of the program's language.
    """
    return build_items_with_reasons(case_row, trace, seed=seed, params=params, language=language)[0]


def _row(
    case_row: Mapping[str, Any],
    case_id: str,
    family: str,
    questions: list[dict[str, Any]],
    trace: Mapping[str, Any],
    features: dict[str, Any],
    output_repr: str,
    output_type: str,
    language: str,
) -> dict[str, Any]:
    source, entry, args = case_row["source"], case_row["entry"], case_row["args"]
    item = {"family": family, "source": source, "entry": entry, "args": args, "questions": questions}
    trace_length = case_row.get("trace_length")
    if trace_length is None:
        trace_length = len(trace.get("steps") or ())
    return {
        "task_id": task_id(case_id, family, questions),
        "case_id": case_id,
        "program_id": case_row.get("program_id"),
        "language": language,
        "family": family,
        "prompt": render_prompt(item, language=language),
        "questions": _JSON(questions),
        "answer": _JSON([q["answer"] for q in questions]),
        "source": source,
        "entry": entry,
        "args": args,
        "tier": case_row.get("tier"),
        "target": case_row.get("target"),
        "grammar_hash": case_row.get("grammar_hash"),
        "trace_length": int(trace_length),
        "n_questions": len(questions),
        **features,
        "output_repr": output_repr,
        "output_type": output_type,
    }
