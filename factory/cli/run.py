"""``execverify run``: a program, or a JSONL batch of cases, in the sandbox under two hash seeds.

``run`` goes through the same Executor as the execute stage: both hash seeds, the worker pool,
the same statuses. A batch is read and checked whole before anything runs, so a bad line never
leaves half an output behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from factory.cli import app
from factory.cli.language_option import LANGUAGE_OPT, program_language
from factory.errors import UserError
from factory.io import parse_json_object
from factory.languages import Language

RESULT_KEYS = ("status", "output_repr", "output_type")
MAX_DETAIL = 200  # characters of an error's message shown (the worker keeps up to 300)
#: The language of CRUXEval's cases (``code``, ``input``: inputs evaluated as Python expressions).
CRUXEVAL_LANGUAGE = "python"


@app.command("run")
def run_command(
    file: Annotated[
        Path | None, typer.Argument(help="Program file (.py, .js) that defines the entry function.")
    ] = None,
    entry: Annotated[str, typer.Option("--entry", help="Entry function name.")] = "f",
    args: Annotated[
        str | None,
        typer.Option("--args", help="Argument list as literal text, e.g. \"[1, 2], 'ab'\"."),
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option(
            "--batch",
            help="JSONL of cases ({source, entry, args} or CRUXEval's {code, input}); - is stdin.",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON (one line per case).")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per case.")] = 2.0,
    memory_mb: Annotated[int, typer.Option("--memory-mb", help="Address-space cap.")] = 1024,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Workers per hash seed (default: CPUs).")
    ] = None,
    language: Annotated[str | None, LANGUAGE_OPT] = None,
) -> None:
    """Run a program on one input (or a batch of cases) in the sandbox, under two hash seeds."""
    if timeout <= 0:
        raise UserError(f"--timeout must be positive, got {timeout}")
    if memory_mb < 64:
        raise UserError(f"--memory-mb must be at least 64, got {memory_mb}")
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    limits = {"timeout_s": timeout, "memory_mb": memory_mb}
    if batch is not None:
        if file is not None or args is not None:
            raise UserError("give either FILE with --args, or --batch, not both")
        lang = program_language(None, language)
        cases = read_batch(batch, lang)
        _run_batch(cases, json_out, limits, workers, lang)
        return
    if file is None:
        raise UserError("missing FILE (or use --batch CASES.jsonl)")
    if args is None:
        raise UserError("missing --args (use --args '' for a function without arguments)")
    lang = program_language(file, language)
    case = read_program(file, entry, args, lang)
    result = run_cases([case], limits, workers=1, language=lang)[0]
    if result["status"] == "bad_program":
        raise UserError(f"{file}: {result.get('detail', 'bad program')}")
    shown = shown_result(result)
    if json_out:
        print(json.dumps(shown))
    else:
        _print_table([shown], title=f"{file.name}: {entry}({args})")


def shown_result(result: dict[str, Any]) -> dict[str, Any]:
    """What ``run`` prints of a result: status, output and ``detail``, the message of the
    exception behind an ``error:<Type>`` status (or why the program could not run), bounded to
    ``MAX_DETAIL`` characters; None when there is none."""
    shown = {key: result.get(key) for key in RESULT_KEYS}
    detail = result.get("detail") or result.get("error")
    if detail is not None and not isinstance(detail, str):
        detail = str(detail)
    status = shown["status"] or ""
    if detail and status.startswith("error:"):
        name = status.removeprefix("error:")
        if detail == name:
            detail = None  # the exception had no message
        else:
            detail = detail.removeprefix(f"{name}: ")
    if detail and len(detail) > MAX_DETAIL:
        detail = detail[: MAX_DETAIL - 1] + "…"
    shown["detail"] = detail or None
    return shown


def read_program(file: Path, entry: str, args: str, lang: Language) -> dict[str, Any]:
    """Read and check the program (in ``lang``) and args in this process: bad input is a UserError."""
    try:
        source = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{file}: file not found") from None
    except IsADirectoryError:
        raise UserError(f"{file}: is a directory, not a program file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{file}: cannot read: {exc}") from None
    error = lang.facet("source_check").syntax_error(source)
    if error is not None:
        line, message = error
        raise UserError(f"{file}:{line}: syntax error: {message}")
    if not lang.is_function_name(entry):
        raise UserError(f"--entry must be a function name, got {entry!r}")
    lang.parse_args(args)  # raises UserError naming the argument that is not a literal
    return {"source": source, "entry": entry, "args": args}


def read_batch(where: str, lang: Language) -> list[dict[str, Any]]:
    """Parse a JSONL batch (``-``: stdin) of programs in ``lang`` into cases; a bad line is a
    UserError naming it.

    A line holds ``source``, ``entry`` (default ``f``) and ``args`` (literal text), or, for Python,
    CRUXEval's ``code`` and ``input``; CRUXEval inputs are evaluated in the program's namespace, as
    its own harness does (a few of them are expressions such as ``dict(e=1)`` or a lambda).
    """
    if where == "-":
        lines = sys.stdin.read().splitlines()
        name = "<stdin>"
    else:
        path = Path(where)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise UserError(f"{where}: file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{where}: cannot read: {exc}") from None
        name = where
    cases = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        cases.append(_batch_case(line, f"{name}:{number}", lang))
    return cases


def _batch_case(line: str, where: str, lang: Language) -> dict[str, Any]:
    record = parse_json_object(line, where)
    if "source" in record:
        case = {
            "source": record["source"],
            "entry": record.get("entry", "f"),
            "args": record.get("args"),
        }
        keys = ("source", "entry", "args")
    elif "code" in record:
        if lang.name != CRUXEVAL_LANGUAGE:
            raise UserError(
                f"{where}: CRUXEval's 'code' and 'input' are Python; a {lang.display_name} case"
                " has 'source' and 'args'"
            )
        case = {
            "source": record["code"],
            "entry": record.get("entry", "f"),
            "args": record.get("input"),
            "eval_args": True,
        }
        keys = ("code", "entry", "input")
    else:
        raise UserError(f"{where}: a case needs 'source' and 'args' (or CRUXEval's 'code', 'input')")
    for key, field in zip(keys, ("source", "entry", "args"), strict=True):
        if not isinstance(case[field], str):
            got = "missing" if case[field] is None else type(case[field]).__name__
            raise UserError(f"{where}: {key!r} must be a string ({got})")
    return case


def run_cases(
    cases: list[dict[str, Any]],
    limits: dict[str, Any],
    workers: int | None,
    *,
    kind: str = "run",
    agree: Any = None,
    kinds: dict[str, str] | None = None,
    language: Language | None = None,
) -> list[dict[str, Any]]:
    """Run cases (programs in ``language``, default Python) through the Executor (both hash
    seeds); ``kind="trace"`` traces them (``kinds``: the job kinds of a stage, the language's
    tracer facet's)."""
    from factory.execute.runner import Executor

    if workers is None:
        from factory.sandbox.os_helpers import default_workers

        workers = max(1, min(default_workers(), len(cases)))
    with Executor(workers=workers, kinds=kinds, language=language, **limits) as executor:
        return list(executor.run(cases, kind=kind, agree=agree))


def _run_batch(
    cases: list[dict[str, Any]],
    json_out: bool,
    limits: dict[str, Any],
    workers: int | None,
    lang: Language,
) -> None:
    results = run_cases(cases, limits, workers, language=lang)
    shown = [shown_result(r) for r in results]
    if json_out:
        out = sys.stdout
        for item in shown:
            out.write(json.dumps(item))
            out.write("\n")
        out.flush()
    else:
        _print_table(shown, title=f"{len(shown)} cases")


def _print_table(results: list[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    if len(results) > 1:
        table.add_column("#", justify="right")
    table.add_column("status")
    table.add_column("output_repr", overflow="fold")
    table.add_column("output_type")
    details = any(r.get("detail") for r in results)
    if details:
        table.add_column("detail", overflow="fold")
    for number, r in enumerate(results, 1):
        style = "green" if r["status"] == "ok" else "yellow"
        cells = [f"[{style}]{r['status']}[/]", _cell(r["output_repr"]), _cell(r["output_type"])]
        if details:
            cells.append(_cell(r.get("detail")) if r.get("detail") else "")
        table.add_row(*([str(number)] if len(results) > 1 else []), *cells)
    Console().print(table)


def _cell(value: str | None) -> str:
    from rich.markup import escape

    if value is None:
        return "—"
    return escape(value if len(value) <= 300 else value[:300] + "…")
