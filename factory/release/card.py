"""The dataset card (``README.md``): a YAML header the Hub and ``datasets`` read (configs, splits),
then tables, plots, the columns, how to load and score, and the provenance. No timestamps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import yaml

from factory import languages
from factory.release.configs import ConfigSpec
from factory.release.plots import _tiers_families
from factory.release.splits import SPLITS

COLUMNS = {
    "task_id": "item id (hash of case, family and questions)",
    "case_id": "the program and its arguments",
    "program_id": "content hash of the normalised program; splits are by this id",
    "language": "the program's language (python, javascript): the prompts, answers and values are in it",
    "family": "item family: white_box, output, input, coverage (codegen in phase2)",
    "prompt": "the prompt shown to the model (numbered program lines, rules, format example)",
    "questions": "JSON list of the questions with their gold answers: what `factory.scoring` reads",
    "answer": "JSON list of the typed gold answers, one per question",
    "source": "the program",
    "entry": "the function called",
    "args": "the argument list as literal text of the program's language (`entry(<args>)`)",
    "tier": "curriculum tier 1-6 (order by it for a curriculum)",
    "target": "type and operation under test",
    "grammar_hash": "hash of the grammar that generated the program",
    "trace_length": "line events in the traced run",
    "n_questions": "questions in the item",
    "n_lines": "lines of the program",
    "n_loops": "loops in the program",
    "n_branches": "if statements in the program",
    "has_helper": "the entry calls a helper function",
    "max_depth": "control-flow nesting depth",
    "output_repr": "repr of the return value",
    "output_type": "type name of the return value",
    "solver_model": "difficulty filter: the solver model",
    "n": "difficulty filter: samples drawn",
    "passes": "difficulty filter: samples judged right",
    "pass_rate": "difficulty filter: passes / n",
    "tests": "codegen: the unit tests",
    "messages": "sft: the chat (user prompt, the teacher's answer judged right)",
    "source_task_id": "sft: the item the example answers",
    "teacher_model": "sft: the model that wrote the answer",
    "sample_index": "sft: which of the teacher's samples",
}


def _yaml_header(configs: list[ConfigSpec], rows: Mapping[str, Mapping[str, int]]) -> str:
    entries = []
    for config in configs:
        splits = [s for s in SPLITS if rows.get(config.name, {}).get(s)]
        if not splits:
            continue
        entry: dict[str, Any] = {
            "config_name": config.name,
            "data_files": [{"split": s, "path": f"{config.name}/{s}/*.parquet"} for s in splits],
        }
        if config.default:
            entry["default"] = True
        entries.append(entry)
    total = sum(sum(r.values()) for r in rows.values())
    size = (
        "n<1K"
        if total < 1_000
        else "1K<n<10K"
        if total < 10_000
        else "10K<n<100K"
        if total < 100_000
        else "100K<n<1M"
    )
    header = {
        "pretty_name": "execverify: execution-reasoning items with verifiable answers",
        "license": "mit",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["code", "execution-reasoning", "reinforcement-learning", "synthetic"],
        "size_categories": [size],
        "configs": entries,
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"


def _common(common: int | None) -> str:
    """The idiom clause of the decontamination sentence (``assemble.ngram_common``)."""
    if common is None:
        return ""
    return f" (not counting n-grams that more than {common} of its programs hold: idioms)"


def _table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _drops(dropped: Mapping[str, int], top: int = 4) -> str:
    items = sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k} {v:,}" for k, v in items[:top])
    if len(items) > top:
        text += f", {len(items) - top} more reasons ({sum(v for _, v in items[top:]):,})"
    return text or "none"


#: The card's quality table: (label, figure key, what the value is); docs/quality.md defines each.
QUALITY_ROWS = (
    ("statements irrelevant to the output (share of statements)¹", "irrelevant_statements", "share"),
    ("output identical over {n} random well-typed inputs", "constant_output", "share"),
    ("a trivial operation: constant-only, self or identity", "trivial_operation", "share"),
    (
        "`if` tests with one outcome over the program's inputs (share of reached tests)",
        "one_outcome_if_tests",
        "share",
    ),
    ("input items solved by a random well-typed argument list", "random_solves_input_item", "share"),
    ("string arguments with a run of four ASCII letters (share of strings)", "four_letter_strings", "share"),
    ("**free of irrelevant statements, constant output and trivial operations**¹", "clean", "share"),
    ("an operation that changes nothing the output shows on the own inputs¹", "inert_operation", "share"),
    ("a dead store (a variable assigned, never read)", "dead_store", "share"),
    ("a loop whose body never reads its loop variable", "unread_loop_variable", "share"),
    ("median relevant statements (statements minus irrelevant)¹", "median_relevant_statements", "number"),
    ("median length of an output's text (characters, over the cases)", "median_output_chars", "number"),
    ("outputs longer than 50 characters (share of the cases)", "long_output", "share"),
    ("distinct identifiers", "identifiers", "count"),
    ("programs", "programs", "count"),
)


def quality_value(value: Any, what: str) -> str:
    """A quality figure as the card shows it (a share as a percentage, `–` when not measured)."""
    if value is None:
        return "–"
    if what == "share":
        return f"{value:.0%}" if value == 0 or value >= 0.01 else f"{value:.1%}"
    if what == "number":
        return f"{value:g}"
    return f"{value:,}"


def _quality_section(by_language: Mapping[str, Any]) -> str:
    """The card's "Quality" section: per language (one table each when there are several), the
    figures per tier and over all programs."""
    if "figures" in by_language:  # a summary of a release measured before the figures were per language
        by_language = {"python": by_language}
    out = [
        "\n## Quality\n\n",
        "What the programs are worth reasoning about, measured on the released programs run on their own "
        "inputs (the arguments of their cases) and on random well-typed inputs drawn from the inputs "
        "stage's pools. A statement is *irrelevant* when removing it leaves every output on the "
        "program's own inputs unchanged (removed iteratively, each reduction re-run); a trivial "
        "operation is judged on the syntax tree, never by name. `–`: nothing to measure.\n\n",
    ]
    names = sorted(by_language, key=lambda name: (name != "python", name))
    for index, name in enumerate(names):
        if len(names) > 1:
            gap = "\n" if index else ""
            out.append(f"{gap}### {languages.language(name).display_name}\n\n")
        out.append(_quality_table(by_language[name]))
    return "".join(out)


def _quality_table(quality: Mapping[str, Any]) -> str:
    """One language's quality table, its footnote and its output types."""
    figures = quality["figures"]
    groups = list(figures)
    head = ["share of programs unless said", *(f"tier {g}" if g != "all" else "all" for g in groups)]
    body = [
        [label.format(n=quality["random_inputs"]), *(quality_value(figures[g][key], what) for g in groups)]
        for label, key, what in QUALITY_ROWS
    ]
    per_tier = quality["ablation_per_tier"]
    sample = (
        "every program"
        if per_tier is None
        else f"a fixed sample of {per_tier} programs per tier (by a hash of `program_id`)"
    )
    types = figures["all"]["output_types"]
    out = [_table(head, body), f"\n¹ measured on {sample}.\n"]
    if types:
        shown = ", ".join(
            f"`{t}` {share:.0%}" for t, share in sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        out.append(f"\nOutput types (share of the released cases): {shown}.\n")
    return "".join(out)


def _difficulty_section(diff: Mapping[str, Any] | None) -> str:
    """The passes histogram of the judged items by family and tier, when a solver judged some."""
    judged = (diff or {}).get("passes_by_family_tier") or {}
    if not judged or not (diff or {}).get("enabled", True):
        return ""
    assert diff is not None  # judged came from it
    n = int(diff.get("n") or max(int(k) for tiers in judged.values() for c in tiers.values() for k in c))
    rows = [
        [family, f"tier {tier}", *(f"{counts.get(str(k), 0):,}" for k in range(n + 1))]
        for family, tiers in judged.items()
        for tier, counts in tiers.items()
    ]
    return (
        "\n## Difficulty\n\n"
        f"Items judged by `{diff.get('solver_model')}` ({diff.get('solver')}): how many of its {n} samples "
        f"were right, by family and tier, before the filter kept passes in [{diff.get('min_pass')}, "
        f"{diff.get('max_pass')}].\n\n" + _table(["family", "tier", *(str(k) for k in range(n + 1))], rows)
    )


def _language_section(language_family: Mapping[str, int]) -> str:
    """Items by language and family (``language/family`` -> items): a table, one row a language."""
    cells = {tuple(key.split("/", 1)): n for key, n in language_family.items()}
    names = sorted({lang for lang, _ in cells})
    families = sorted({f for _, f in cells})
    body = [
        [
            f"`{lang}`",
            *(f"{cells.get((lang, f), 0):,}" for f in families),
            f"{sum(cells.get((lang, f), 0) for f in families):,}",
        ]
        for lang in names
    ]
    intro = (
        "Each row's `language` column names its language; with more than one, every config also "
        "comes per language as `<config>-<language>`.\n\n"
    )
    if len(names) > 1:
        intro += (
            "Only the `python` rows are matched against the benchmarks (which are Python programs); "
            "the quality figures below are measured per language.\n\n"
        )
    return "\n## Items by language\n\n" + intro + _table(["language", *families, "all"], body)


def render_card(
    summary: dict[str, Any],
    configs: list[ConfigSpec],
    schemas: Mapping[str, pa.Schema],
    prov: dict[str, Any],
) -> str:
    """The full README.md of a release folder."""
    rows = summary["configs"]
    stats = summary["stats"]
    out = [_yaml_header(configs, rows)]
    out.append("# execverify: execution-reasoning items with verifiable answers\n\n")
    names = sorted({key.split("/", 1)[0] for key in summary.get("language_family", {})}) or ["python"]
    shown = " and ".join(languages.language(name).display_name for name in names)
    out.append(
        f"Small {shown} programs synthesized from type-and-method grammars in six curriculum tiers, run "
        "in a sandbox, traced, and turned into questions whose answers the interpreter proves: the "
        "output, an input for an output, the next line executed, a variable's value and type after a "
        "step, whether a line runs. Every answer is judged by `factory.scoring` (package "
        "`execverify-factory`), which also gives the RL rewards.\n"
    )
    out.append("## Configs and splits\n\n")
    out.append(
        "Splits are by program (a hash of `program_id`): no program is in two splits, and adding "
        "programs never moves an existing one.\n\n"
    )
    table = []
    for c in configs:
        if c.name in rows:
            table.append([f"`{c.name}`", c.description, *(f"{rows[c.name].get(s, 0):,}" for s in SPLITS)])
    out.append(_table(["config", "items", *SPLITS], table))

    tiers, families, cells = _tiers_families(summary)
    out.append("\n## Items by tier and family\n\n")
    body = [
        [
            f"tier {t}",
            *(f"{cells.get((t, f), 0):,}" for f in families),
            f"{sum(cells.get((t, f), 0) for f in families):,}",
        ]
        for t in tiers
    ]
    body.append(
        [
            "**all**",
            *(f"{sum(cells.get((t, f), 0) for t in tiers):,}" for f in families),
            f"{sum(cells.values()):,}",
        ]
    )
    out.append(_table(["tier", *families, "all"], body))
    out.append("\n![Items by tier and family](assets/counts_by_tier_family.png)\n")
    out.append(_language_section(summary.get("language_family", {})))
    if summary.get("quality"):
        out.append(_quality_section(summary["quality"]))

    out.append("\n## Yield per stage\n\n")
    out.append(
        "Each stage counts its own unit (synthesize: programs; inputs: programs → cases; execute, "
        "trace: cases; tasks: cases that gave items; assemble: items).\n\n"
    )
    out.append(
        _table(
            ["stage", "in", "out", "dropped (top reasons)"],
            [[s["stage"], f"{s['in']:,}", f"{s['out']:,}", _drops(s["dropped"])] for s in summary["stages"]],
        )
    )
    out.append("\n![Yield per stage](assets/yield_funnel.png)\n")

    decon = stats["decontamination"]
    abstract = prov["params"].get("assemble", {}).get("near_dup_literals") == "abstract"
    literals = "abstracted" if abstract else "kept"
    out.append("\n## Dedup and decontamination\n\n")
    out.append(
        f"Programs in: {stats['programs']['in']:,}; kept: {stats['programs'].get('kept', 0):,} "
        f"(train {stats['programs_by_split']['train']:,}, test {stats['programs_by_split']['test']:,}). "
        f"Exact duplicates (a `task_id` seen before): {stats['dropped'].get('exact_duplicate', 0):,} items. "
        f"Near duplicates (same AST once identifiers are renamed in order of appearance; literals "
        f"{literals}): "
        f"{stats['programs'].get('near_duplicate', 0):,} programs.\n\n"
        f"Decontamination: a program is removed when its renamed AST (whole or one function) equals a "
        f"benchmark program's, or when at least {decon['ngram_threshold']:.0%} of its "
        f"{decon['ngram']}-grams of normalised tokens occur in one benchmark"
        f"{_common(decon.get('ngram_common'))}.\n\n"
    )
    out.append(
        _table(
            ["benchmark", "programs indexed", "removed (AST)", "removed (n-gram)"],
            [
                [name, f"{decon['benchmark_programs'][name]:,}", f"{r['ast']:,}", f"{r['ngram']:,}"]
                for name, r in decon["programs_removed"].items()
            ],
        )
    )

    answers = summary["answers"]
    if answers:
        out.append("\n## Answers\n\n")
        types = sorted(set(answers["output_types"]) | set(answers["state_types"]))
        out.append(
            _table(
                ["answer type", "output questions", "state questions"],
                [
                    [
                        f"`{t}`",
                        f"{answers['output_types'].get(t, 0):,}",
                        f"{answers['state_types'].get(t, 0):,}",
                    ]
                    for t in types
                ],
            )
        )
        out.append(
            f"\nnext_line answers of -1 (no line follows): {answers['next_line_minus_one']:,} "
            f"({answers['next_line_minus_one_share']:.1%}); state answers `Nil` (line not run that "
            f"often): {answers['state_nil']:,} ({answers['state_nil_share']:.1%}); coverage answers: "
            + ", ".join(f"{k} {v:,}" for k, v in answers["coverage"].items())
            + ".\n"
        )
    out.append("\n![Trace length](assets/trace_length.png)\n")

    out.append("\n## Columns\n\n")
    for source, schema in schemas.items():
        used = [c.name for c in configs if c.source == source and c.name in rows]
        if not used:
            continue  # an empty input (e.g. the sft stage off) has no config in the card
        out.append(f"\nConfigs {', '.join(f'`{u}`' for u in used)}:\n\n")
        out.append(
            _table(
                ["column", "type", "meaning"],
                [[f"`{f.name}`", f"`{f.type}`", COLUMNS.get(f.name, "")] for f in schema],
            )
        )

    default = next((c.name for c in configs if c.default), configs[0].name)
    out.append("\n## Load and score\n\n")
    out.append(
        "```python\n"
        "from datasets import load_dataset\n"
        "from factory.scoring import score_item  # pip install execverify-factory\n\n"
        f'ds = load_dataset("ORG/NAME", "{default}", revision="vX.Y.Z", split="train")  # or a local folder\n'
        "item = ds[0]\n"
        'completion = "<answer>\\n...one line per question...\\n</answer>"\n'
        "result = score_item(item, completion)  # reads `family` and `questions`\n"
        "print(result.reward)\n"
        "```\n\n"
        "For TRL, `factory.rewards.trl` gives one reward function per family that takes these columns "
        "as keyword arguments; `factory.rewards.verl.compute_score` wraps the same scorer for verl.\n"
    )

    out.append(_difficulty_section(prov["difficulty"]))
    out.append("\n## Provenance\n\n")
    diff = prov["difficulty"]
    if diff is None or not diff.get("enabled", True):
        solver = "no difficulty filter was applied (items are not filtered by a solver's pass rate)"
    else:
        solver = (
            f"solver `{diff.get('solver')}` model `{diff.get('solver_model')}`, n = {diff.get('n')}, "
            f"kept pass rates in [{diff.get('min_pass')}, {diff.get('max_pass')}]"
        )
    facts = [
        ["git commit", f"`{prov['git_commit']}`"],
        ["package", f"execverify-factory {prov['factory_version']}"],
        [
            "Python",
            f"{prov['python_implementation']} {prov['python_version']} (the minor version shapes traces)",
        ],
        ["Hypothesis", prov["hypothesis_version"]],
        ["grammar hash", f"`{prov['grammar_hash']}`"],
        ["difficulty", solver],
    ]
    facts += [[f"dvc.lock: {stage}", f"`{rev}`"] for stage, rev in prov["dvc_stages"].items()]
    if not prov["dvc_stages"]:
        facts.append(["dvc.lock", "not recorded (built outside `dvc repro`)"])
    out.append(_table(["what", "value"], facts))
    out.append(
        "\nParams (`params.yaml`):\n\n```yaml\n" + yaml.safe_dump(prov["params"], sort_keys=True) + "```\n"
    )
    return "".join(out)


def card_configs(card: str) -> list[dict[str, Any]]:
    """The ``configs`` entries of a card's YAML header (for tests and tools)."""
    return yaml.safe_load(card.split("---\n", 2)[1])["configs"]
