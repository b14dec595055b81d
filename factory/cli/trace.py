"""``execverify trace`` and ``execverify questions``: one program's trace and the questions it supports.

Both run the program in the sandbox pool under both hash seeds (a trace that depends on the hash
seed is reported ``nondeterministic``, as the trace stage would drop it).
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from factory.cli import app
from factory.cli.language_option import LANGUAGE_OPT, program_language
from factory.cli.run import read_batch, read_program, run_cases
from factory.errors import UserError
from factory.languages import Language
from factory.params import TraceParams

TRACE_KEYS = ("status", "output_repr", "output_type", "steps", "states")
FILE_ARG = typer.Argument(help="Program file (.py, .js) that defines the entry function.")
ENTRY_OPT = typer.Option("--entry", help="Entry function name.")
ARGS_OPT = typer.Option("--args", help="Argument list as literal text, e.g. \"[1, 2], 'ab'\".")
JSON_OPT = typer.Option("--json", help="Print JSON only.")


def _limits(timeout: float, max_steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    if timeout <= 0:
        raise UserError(f"--timeout must be positive, got {timeout}")
    if max_steps < 1:
        raise UserError(f"--max-steps must be at least 1, got {max_steps}")
    from factory.trace.jobs import payload_limits

    return {"timeout_s": timeout}, {**payload_limits(TraceParams()), "max_steps": max_steps}


def trace_cases(
    cases: list[dict[str, Any]], timeout: float, max_steps: int, lang: Language
) -> list[dict[str, Any]]:
    """Traces of cases (``source``, ``entry``, ``args`` in ``lang``) by the language's tracer
    facet, checked under both hash seeds."""
    from factory.trace.stage import same_trace

    limits, options = _limits(timeout, max_steps)
    cases = [{**c, **options} for c in cases]
    agree = partial(same_trace, values=lang)
    kinds = lang.facet("tracer").KINDS
    results = run_cases(cases, limits, None, kind="trace", agree=agree, kinds=kinds, language=lang)
    for result in results:
        if result["status"] == "bad_program":
            raise UserError(f"bad program: {result.get('error') or result.get('detail')}")
    return [{key: r.get(key) for key in TRACE_KEYS} for r in results]


@app.command("trace")
def trace_command(
    file: Annotated[Path | None, FILE_ARG] = None,
    entry: Annotated[str, ENTRY_OPT] = "f",
    args: Annotated[str | None, ARGS_OPT] = None,
    batch: Annotated[str | None, typer.Option("--batch", help="JSONL of cases; - is stdin.")] = None,
    json_out: Annotated[bool, JSON_OPT] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per case.")] = 5.0,
    max_steps: Annotated[int, typer.Option("--max-steps", help="Longer traces: too_many_steps.")] = 20000,
    language: Annotated[str | None, LANGUAGE_OPT] = None,
) -> None:
    """Trace a program on one input (or a batch): every step and every changed variable."""
    if batch is not None:
        if file is not None or args is not None:
            raise UserError("give either FILE with --args, or --batch, not both")
        lang = program_language(None, language)
        results = trace_cases(read_batch(batch, lang), timeout, max_steps, lang)
        if json_out:
            sys.stdout.writelines(json.dumps(r) + "\n" for r in results)
        else:
            for number, r in enumerate(results, 1):
                _print_trace(r, f"case {number}", None)
        return
    case, lang = _one_case(file, entry, args, language)
    assert file is not None  # _one_case refuses a missing FILE
    result = trace_cases([case], timeout, max_steps, lang)[0]
    if json_out:
        print(json.dumps(result))
    else:
        _print_trace(result, f"{file.name}: {entry}({args})", case["source"])


@app.command("questions")
def questions_command(
    file: Annotated[Path | None, FILE_ARG] = None,
    entry: Annotated[str, ENTRY_OPT] = "f",
    args: Annotated[str | None, ARGS_OPT] = None,
    json_out: Annotated[bool, JSON_OPT] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds.")] = 5.0,
    language: Annotated[str | None, LANGUAGE_OPT] = None,
) -> None:
    """Every question the program's trace supports (before sampling), with gold answers."""
    from factory.tasks.questions import questions_from_trace

    case, lang = _one_case(file, entry, args, language)
    result = trace_cases([case], timeout, 20000, lang)[0]
    if result["status"] != "ok":
        raise UserError(f"the program does not run to a literal result: {result['status']}")
    questions = questions_from_trace(case["source"], result, language=lang.name)
    if json_out:
        print(json.dumps(questions))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(questions)} questions: {entry}({args})")
    for column in ("family", "line", "occurrence", "var", "answer"):
        table.add_column(column, overflow="fold")
    for q in questions:
        table.add_row(*(str(q.get(c, "")) for c in ("family", "line", "occurrence", "var", "answer")))
    Console().print(table)


@app.command("task")
def task_command(
    file: Annotated[Path | None, FILE_ARG] = None,
    entry: Annotated[str, ENTRY_OPT] = "f",
    args: Annotated[str | None, ARGS_OPT] = None,
    family: Annotated[
        str, typer.Option("--family", help="white_box, output, input or coverage.")
    ] = "white_box",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the question sampling.")] = 42,
    json_out: Annotated[bool, JSON_OPT] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds.")] = 5.0,
    language: Annotated[str | None, LANGUAGE_OPT] = None,
) -> None:
    """One task record for a program and input, exactly as a row of the released dataset."""
    from factory.params import TasksParams
    from factory.tasks.items import build_items_with_reasons

    known = TasksParams.model_fields["families"].default
    if family not in known:
        raise UserError(f"unknown --family {family!r} (known: {', '.join(known)})")
    case, lang = _one_case(file, entry, args, language)
    result = trace_cases([case], timeout, 20000, lang)[0]
    if result["status"] != "ok":
        raise UserError(f"the program does not run to a literal result: {result['status']}")
    from factory.contracts import program_id

    row = {**case, "program_id": program_id(case["source"], lang.name)}
    params = TasksParams(families=[family])
    items, reasons = build_items_with_reasons(row, result, seed=seed, params=params, language=lang.name)
    if not items:
        raise UserError(
            f"no {family} item for this program and input ({', '.join(reasons) or 'no question'})"
        )
    item = items[0]
    if json_out:
        print(json.dumps(item))
        return
    from rich.console import Console

    from factory.cli.score import gold_answers
    from factory.tasks.prompts import numbered

    # The prompt and the gold lines go out verbatim (plain writes: rich would re-wrap long
    # lines to the terminal's width and hide what the model is really shown).
    console = Console()
    console.rule(f"{family} item {item['task_id']}")
    sys.stdout.write(item["prompt"].rstrip("\n") + "\n")
    sys.stdout.flush()
    console.rule("gold answers (the <answer> lines of a right completion)")
    sys.stdout.writelines(f"{line}\n" for line in numbered([str(g) for g in gold_answers(item)]))
    sys.stdout.flush()


def _one_case(
    file: Path | None, entry: str, args: str | None, language: str | None
) -> tuple[dict[str, Any], Language]:
    """The case of FILE, ``--entry`` and ``--args``, and its language (``--language`` or FILE's)."""
    if file is None:
        raise UserError("missing FILE")
    if args is None:
        raise UserError("missing --args (use --args '' for a function without arguments)")
    lang = program_language(file, language)
    return read_program(file, entry, args, lang), lang


def _print_trace(result: dict[str, Any], title: str, source: str | None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{escape(title)}[/]: {result['status']} → {escape(str(result['output_repr']))}")
    lines = source.splitlines() if source else []
    changed: dict[int, list[str]] = {}
    for s in result["states"]:
        changed.setdefault(s["step"], []).append(f"{s['var']} = {s['repr']} ({s['type']})")
    table = Table()
    for column in ("step", "line", "func", "source", "changed after the step"):
        table.add_column(column, overflow="fold")
    for step in result["steps"]:
        text = lines[step["line"] - 1].strip() if 0 < step["line"] <= len(lines) else ""
        table.add_row(
            str(step["step"]),
            str(step["line"]),
            step["func"],
            escape(text),
            escape("; ".join(changed.get(step["step"], []))),
        )
    console.print(table)
