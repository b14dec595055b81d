"""``execverify eval``: a model on a benchmark (the difficulty and sft stages are ``execverify stage``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from factory.cli import app
from factory.errors import UserError
from factory.params import SolverParams, validate_section


@app.command("eval")
def eval_command(
    benchmark: Annotated[str, typer.Option("--benchmark", help="cruxeval-o, cruxeval-i or release.")],
    path: Annotated[
        Path, typer.Option("--path", help="CRUXEval JSONL, or a release / tasks folder of parquet.")
    ],
    solver: Annotated[str, typer.Option("--solver", help="transformers, openai or vllm.")] = "transformers",
    model: Annotated[
        str, typer.Option("--model", help="embedded, a local folder, or a served name.")
    ] = "embedded",
    n: Annotated[int, typer.Option("--n", help="Samples per item (pass@k for k = n).")] = 1,
    limit: Annotated[int, typer.Option("--limit", help="Evaluate the first N items (0: all).")] = 0,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Default: 0 (greedy) for n=1, else 0.8.")
    ] = None,
    top_p: Annotated[float, typer.Option("--top-p")] = 0.95,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 512,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai: the server.")] = None,
    endpoint: Annotated[str, typer.Option("--endpoint", help="openai: chat or completions.")] = "chat",
    concurrency: Annotated[int, typer.Option("--concurrency", help="openai: requests in flight.")] = 16,
    threads: Annotated[int, typer.Option("--threads", help="transformers on CPU: torch threads.")] = 1,
    cache: Annotated[str, typer.Option("--cache", help="Response cache (sqlite); default: user cache.")] = "",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Accuracy of a model on CRUXEval or on our release's test split (pass@1, pass@k, unparsed
    apart from wrong; per family and REval's incremental consistency for a release)."""
    from factory.evaluate import evaluate, load_benchmark
    from factory.solvers import solver_from_params

    if n < 1 or limit < 0:
        raise UserError("--n must be >= 1 and --limit >= 0")
    if temperature is None:
        temperature = 0.0 if n == 1 else 0.8
    sp = validate_section(
        SolverParams,
        {
            "solver": solver,
            "model": model,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "base_url": base_url,
            "endpoint": endpoint,
            "concurrency": concurrency,
            "threads": threads,
            "cache": cache,
        },
        "eval",
        "--",
    )
    items, skipped = load_benchmark(benchmark, path, limit)
    if not items:
        raise UserError(f"{path}: no items to evaluate")
    cached = solver_from_params(sp, "eval")
    report = evaluate(
        items,
        cached,
        n=n,
        temperature=sp.temperature,
        top_p=sp.top_p,
        max_tokens=sp.max_tokens,
        seed=seed,
        consistency=benchmark == "release",
    )
    report = {"benchmark": benchmark, "path": str(path), "solver": sp.solver, **report, "skipped": skipped}
    report["model_calls"] = cached.model_calls
    if json_out:
        print(json.dumps(report, sort_keys=True))
    else:
        _print_report(report)


def _print_report(report: dict) -> None:
    console = Console()
    title = f"{report['benchmark']}: {report['model']} on {report['items']} items, n={report['n']}"
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in sorted(k for k in report if k.startswith("pass@")):
        table.add_row(key, f"{report[key]:.3f}")
    for verdict, count in report["samples"].items():
        table.add_row(f"samples {verdict}", str(count))
    for family, row in report["by_question_family"].items():
        table.add_row(f"{family} questions right", f"{row['accuracy']:.3f}")
    ic = report.get("incremental_consistency")
    if ic and ic["score"] is not None:
        table.add_row(f"REval IC ({ic['chains']} chains)", f"{ic['score']:.3f}")
    console.print(table)
