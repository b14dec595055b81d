"""``execverify score``: judge one completion against one task with the shared scorer (docs/design.md §11).

The task is one dataset row as JSON (``questions``/``tests`` may be lists or JSON text). The
completion file holds plain text, or a JSON conversation (a list of ``{"role", "content"}``
messages, the last assistant message is judged). For a codegen task it holds the code, fenced
or not.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from factory.cli import app
from factory.errors import UserError
from factory.io import parse_json_object
from factory.sandbox.untrusted.runner import ALLOW_WEAK_ENV, SANDBOX_INCOMPLETE, sandbox_layers
from factory.scoring import score_item
from factory.scoring.score import needs_execution


@app.command("score")
def score_command(
    task: Annotated[Path, typer.Option("--task", help="Task JSON: one row of the dataset.")],
    completion: Annotated[
        Path, typer.Option("--completion", help="Completion: text, or a JSON list of messages.")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    alpha: Annotated[
        float, typer.Option("--alpha", help="White-box weight α in R = 2((1-α)R_io + αR_wb).")
    ] = 0.5,
    gated: Annotated[
        bool, typer.Option("--gated", help="White-box reward 0 when the output is wrong.")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds per sandboxed run (input, codegen).")
    ] = 5.0,
    allow_weak_sandbox: Annotated[
        bool,
        typer.Option(
            "--allow-weak-sandbox",
            help="Run untrusted code even without a kernel layer (seccomp, Landlock), with a warning.",
        ),
    ] = False,
) -> None:
    """Score a completion: the reward and how each answer was judged."""
    if allow_weak_sandbox:
        os.environ[ALLOW_WEAK_ENV] = "1"
    if not 0.0 <= alpha <= 1.0:
        raise UserError(f"--alpha must be in [0, 1], got {alpha}")
    if timeout <= 0:
        raise UserError(f"--timeout must be positive, got {timeout}")
    item = _read_task(task)
    text = _read_text(completion, "completion")
    result = score_item(item, _as_completion(text), alpha=alpha, gated=gated, timeout_s=timeout)
    data = result.to_dict()
    for question, gold in zip(data["per_question"], gold_answers(item), strict=False):
        question["gold"] = gold
    shown = {"reward": data.pop("reward"), **data}
    if needs_execution(item):
        shown["sandbox"] = sandbox_layers()
    if json_out:
        print(json.dumps(shown))
    else:
        _print_table(shown)


def gold_answers(item: dict[str, Any]) -> list[str | None]:
    """The gold answer line of each question of a (valid) task, as a right completion writes it
    (``assert f(3) == 6``, the next line's code, ``6; int``); None for a codegen task, whose
    tests are the gold. An input question's gold is the task's own call (any call that gives
    the output is right)."""
    from factory.tasks.prompts import answer_line, language_prompts

    questions = item.get("questions")
    if item.get("family") == "codegen" or questions is None:
        return [None] * len(item.get("tests") or [])
    if isinstance(questions, str):
        questions = json.loads(questions)
    entry, args, source = item.get("entry", "f"), item.get("args"), item.get("source", "")
    language = item.get("language") or "python"  # the scorer reads the answers in it too
    golds: list[str | None] = []
    for q in questions:
        try:
            if q["family"] == "input" and args is None:
                golds.append(language_prompts(language).assertion(f"{entry}(??)", q["answer"]))
            else:
                golds.append(answer_line(q, entry, args, source, language=language))
        except (KeyError, TypeError, ValueError, LookupError):
            golds.append(str(q.get("answer")))
    return golds


def _read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise UserError(f"{what} file not found: {path}")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {what} file {path}: {exc}") from None


def _read_task(path: Path) -> dict[str, Any]:
    task = parse_json_object(_read_text(path, "task"), str(path))
    if "family" not in task:
        raise UserError(f"{path}: the task has no 'family'")
    return task


def _as_completion(text: str) -> str | list[dict[str, Any]]:
    """A JSON list of messages is a conversation; anything else is the completion's text."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(value, list) and value and all(isinstance(m, dict) and "content" in m for m in value):
            return value
    return text


def _print_table(shown: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    title = f"{shown['family']}: reward {shown['reward']:.4g}"
    extras = [f"{k} {shown[k]:.4g}" for k in ("r_io", "r_wb") if shown.get(k) is not None]
    if shown.get("status"):
        extras.append(f"sandbox {shown['status']}")
    if extras:
        title += " (" + ", ".join(extras) + ")"
    if "sandbox" in shown:
        title += "\nsandbox layers: " + ", ".join(shown["sandbox"]["in_force"])
        if shown["sandbox"]["missing"]:
            title += " (missing: " + ", ".join(shown["sandbox"]["missing"]) + ")"
    table = Table(title=title)
    if shown.get("status") == SANDBOX_INCOMPLETE:
        # Said on stderr: the code was refused, not judged wrong.
        Console(stderr=True).print(
            "the completion was not run: the sandbox lacks "
            + " and ".join(shown.get("sandbox", {}).get("missing") or ["a kernel layer"])
            + " on this machine (docs/design.md §6.2); --allow-weak-sandbox runs it anyway",
            style="yellow",
            markup=False,
        )
    table.add_column("#", justify="right")
    table.add_column("family")
    table.add_column("verdict")
    table.add_column("answer / test", overflow="fold")
    golds = any(q.get("gold") is not None for q in shown["per_question"])
    if golds:
        table.add_column("expected", overflow="fold")
    colours = {"right": "green", "wrong": "red", "unparsed": "yellow"}
    for i, q in enumerate(shown["per_question"], 1):
        verdict = q["verdict"]
        shown_text = q.get("test") if q.get("test") is not None else q.get("answer")
        cells = [
            str(i),
            q["family"],
            Text(verdict, style=colours.get(verdict, "")),
            Text("" if shown_text is None else str(shown_text)),  # never read as markup
        ]
        if golds:
            cells.append(Text("" if q.get("gold") is None else str(q["gold"])))
        table.add_row(*cells)
    console.print(table)
    console.print(f"right {shown['n_right']}, wrong {shown['n_wrong']}, unparsed {shown['n_unparsed']}")
