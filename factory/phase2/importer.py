"""Import an outside code-generation dataset into the phase-2 schema (``PHASE2_SCHEMA``).

Sources: a local file (``.jsonl``, ``.jsonl.gz``, ``.json`` holding an array, ``.parquet``) read
here, or anything ``datasets.load_dataset`` opens (a Hub id or a local dataset folder, with
``config``, ``split`` and ``revision``; needs the ``train`` extra). Row formats, recognised per row:

- HumanEval: ``prompt`` (signature and docstring), ``canonical_solution``, ``entry_point`` and
  ``test`` (a ``check(candidate)`` function). When the body of ``check`` is asserts only, each
  assert becomes one test (so the reward is a fraction, not all or nothing), run after the test
  file's other top-level code with ``candidate`` bound to the entry; otherwise the whole of
  ``check`` is one test.
- MBPP: ``prompt`` or ``text``, ``code``, ``test_list`` (asserts), ``test_imports``; the entry is the
  function of ``code`` that the tests call.
- Generic: a problem text in ``prompt``/``problem``/``question``/``description``/``text``, tests
  in ``tests``/``test_list`` (a list of test sources, or its JSON text), optionally
  ``entry_point``/``entry``/``fn_name`` and a reference in ``solution``/``canonical_solution``/``code``.

The first ``show`` tests are also shown in the prompt (MBPP's own convention). Rows that cannot
become an item are dropped with a reason (``no_problem``, ``no_tests``, ``no_entry``,
``test_syntax_error``; with ``verify``, ``reference_fails`` when the dataset's own solution does
not pass all its tests in the sandbox, judged by the codegen scorer).
"""

from __future__ import annotations

import ast
import gzip
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from factory.contracts import PHASE2_SCHEMA
from factory.errors import UserError
from factory.io import ShardWriter
from factory.phase2.items import FAMILY, gold_completion, imported_prompt, task_id
from factory.progress import progress
from factory.stats import StageStats

PROBLEM_KEYS = ("prompt", "problem", "question", "description", "text")
TESTS_KEYS = ("tests", "test_list")
ENTRY_KEYS = ("entry_point", "entry", "fn_name")
SOLUTION_KEYS = ("solution", "canonical_solution", "code")
ID_KEYS = ("task_id", "id", "problem_id")


class Skip(Exception):
    """A row that cannot become an item; the message is the drop reason."""


def read_rows(
    source: str, *, config: str | None = None, split: str = "train", revision: str | None = None
) -> Iterator[dict[str, Any]]:
    """The rows of a local file, or of ``datasets.load_dataset(source, config, split=split,
    revision=revision)`` for a Hub id or a dataset folder."""
    path = Path(source)
    if path.is_file():
        yield from _read_local(path)
        return
    if path.suffix in (".jsonl", ".json", ".parquet", ".gz"):
        raise UserError(f"{source}: file not found")
    try:
        import datasets
    except ImportError:
        raise UserError(
            f"{source} is not a local file; loading a dataset folder or Hub id needs the train extra "
            "(pip install -e '.[train]')"
        ) from None
    try:
        dataset = datasets.load_dataset(source, config, split=split, revision=revision)
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; the user needs one line
        message = f"cannot load dataset {source!r}: {type(exc).__name__}: {exc}"
        raise UserError(message.splitlines()[0]) from None
    yield from dataset


def _read_local(path: Path) -> Iterator[dict[str, Any]]:
    name = path.name
    try:
        if name.endswith(".parquet"):
            for batch in pq.ParquetFile(path).iter_batches(batch_size=1000):
                yield from batch.to_pylist()
            return
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            if name.endswith(".json"):
                data = json.load(fh)
                if not isinstance(data, list):
                    raise UserError(f"{path}: a .json file must hold an array of rows")
                yield from data
                return
            for number, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise UserError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    except UserError:
        raise
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors on a broken parquet file
        raise UserError(f"{path}: cannot read: {type(exc).__name__}: {exc}".splitlines()[0]) from None


def _first(row: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None and value != "" and value != []:
            return value
    return None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def humaneval_tests(test: str, entry: str) -> list[str]:
    """HumanEval's ``check(candidate)`` as unit tests (see the module docstring)."""
    try:
        module = ast.parse(test)
    except SyntaxError:
        raise Skip("test_syntax_error") from None
    check = next((s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == "check"), None)
    if check is None or len(check.args.args) != 1:
        raise Skip("no_tests")
    preamble = "\n".join(ast.unparse(s) for s in module.body if s is not check)
    param = check.args.args[0].arg
    body = [
        s
        for s in check.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) and not isinstance(s, ast.Pass)
    ]
    head = f"{preamble}\n{param} = {entry}\n" if preamble else f"{param} = {entry}\n"
    if body and all(isinstance(s, ast.Assert) for s in body):
        return [head + ast.unparse(s) for s in body]
    return [f"{test.rstrip()}\n\ncheck({entry})\n"]


def _called_names(tests: list[str]) -> list[str]:
    names = []
    for test in tests:
        for node in ast.walk(ast.parse(test)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                names.append(node.func.id)
    return names


def _defined(code: str | None) -> list[str]:
    if not code or not _parses(code):
        return []
    return [s.name for s in ast.parse(code).body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]


def row_to_item(row: Mapping[str, Any], origin: str, index: int, show: int) -> dict[str, Any]:
    """One dataset row as a phase-2 item; raises ``Skip(reason)`` when it cannot be one."""
    problem = _first(row, PROBLEM_KEYS)
    if not isinstance(problem, str) or not problem.strip():
        raise Skip("no_problem")
    entry = _first(row, ENTRY_KEYS)
    solution = _first(row, SOLUTION_KEYS)
    test = row.get("test")
    if isinstance(test, str) and "def check(" in test and isinstance(entry, str):
        tests = humaneval_tests(test, entry)
        if isinstance(row.get("canonical_solution"), str):
            solution = problem + row["canonical_solution"]  # HumanEval: the body completes the prompt
        shown: list[str] = []
    else:
        tests = _first(row, TESTS_KEYS)
        if isinstance(tests, str):
            try:
                tests = json.loads(tests)
            except json.JSONDecodeError:
                tests = [tests]
        if not isinstance(tests, (list, tuple)) or not tests or not all(isinstance(t, str) for t in tests):
            raise Skip("no_tests")
        tests = list(tests)
        shown = tests[:show]
        imports = row.get("test_imports")
        if imports:
            prefix = "\n".join(imports) + "\n" if isinstance(imports, (list, tuple)) else f"{imports}\n"
            tests = [prefix + t for t in tests]
    if not all(_parses(t) for t in tests):
        raise Skip("test_syntax_error")
    if not isinstance(entry, str) or not entry.isidentifier():
        called = _called_names(tests)
        entry = next((n for n in _defined(solution) if n in called), None)
        if entry is None:
            raise Skip("no_entry")
    name_id = _first(row, ID_KEYS)
    program_id = str(name_id) if name_id is not None else f"{origin}/{index}"
    return {
        "task_id": task_id(origin, program_id, tests),
        "family": FAMILY,
        "origin": origin,
        "program_id": program_id,
        "language": "python",  # the importer reads Python datasets (HumanEval, MBPP, ...)
        "prompt": imported_prompt(problem, entry, shown),
        "entry": entry,
        "signature": None,
        "tests": json.dumps(tests),
        "examples": json.dumps(shown),
        "source": solution if isinstance(solution, str) else None,
        "tier": None,
        "target": None,
        "grammar_hash": None,
        "n_tests": len(tests),
        "n_examples": len(shown),
    }


def _verified(
    items: list[dict[str, Any]], stats: StageStats, workers: int | None, timeout_s: float
) -> list[dict[str, Any]]:
    """The items whose reference solution passes all their tests (the codegen scorer, sandboxed)."""
    from factory.scoring import score_batch

    with_ref = [i for i in items if i["source"]]
    results = score_batch(
        with_ref, [gold_completion(i) for i in with_ref], workers=workers, timeout_s=timeout_s
    )
    failed = {i["task_id"] for i, r in zip(with_ref, results, strict=True) if r.reward < 1.0}
    for item in items:
        if not item["source"]:
            stats.drop("no_reference")
        elif item["task_id"] in failed:
            stats.drop("reference_fails")
    return [i for i in items if i["source"] and i["task_id"] not in failed]


def import_dataset(
    rows: Iterable[Mapping[str, Any]],
    origin: str,
    out_dir: str | Path,
    stats_path: str | Path,
    *,
    show: int = 1,
    verify: bool = False,
    limit: int | None = None,
    workers: int | None = None,
    timeout_s: float = 5.0,
) -> StageStats:
    """Write the items of ``rows`` to ``out_dir`` (parquet shards) and the stats JSON."""
    if not origin or any(c.isspace() for c in origin):
        raise UserError(f"--name must be a non-empty word, got {origin!r}")
    stats = StageStats("phase2_import")
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    with progress(f"import {origin}", limit) as advance:
        for index, row in enumerate(rows):
            if limit is not None and index >= limit:
                break
            stats.items_in += 1
            advance(1)
            if not isinstance(row, Mapping):
                stats.drop("not_an_object")
                continue
            try:
                item = row_to_item(row, origin, index, show)
            except Skip as skip:
                stats.drop(str(skip))
                continue
            if item["task_id"] in seen:
                stats.drop("duplicate")
                continue
            seen.add(item["task_id"])
            items.append(item)
    if verify:
        items = _verified(items, stats, workers, timeout_s)
    with ShardWriter(out_dir, PHASE2_SCHEMA) as out:
        out.write_many(items)
    stats.items_out = len(items)
    stats.extra["origin"] = origin
    stats.extra["tests_per_item"] = dict(sorted(Counter(str(i["n_tests"]) for i in items).items()))
    stats.extra["verified"] = verify
    stats.write(stats_path)
    return stats
