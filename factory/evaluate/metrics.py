"""Accuracy metrics: pass@k, wrong vs unparsed, per family, and REval's incremental consistency."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from factory.scoring import ScoreResult

#: REval's chain over one program and input: each link counts only when all before it hold.
CHAIN = ("coverage", "state", "next_line", "output")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from n samples of which c are right (Chen et al., 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def verdict(result: ScoreResult) -> str:
    """``right`` when every question is right, ``unparsed`` when no answer was read, else ``wrong``."""
    total = len(result.per_question)
    if result.n_right == total:
        return "right"
    if result.n_unparsed == total:
        return "unparsed"
    return "wrong"


def summarize(items: Sequence[Mapping[str, Any]], results: Sequence[Sequence[ScoreResult]]) -> dict[str, Any]:
    """The report for ``results[i]`` (n samples) of ``items[i]``."""
    n = len(results[0]) if results else 0
    ks = sorted({1, n}) if n else []
    counts = {"right": 0, "wrong": 0, "unparsed": 0}
    pass_k = dict.fromkeys(ks, 0.0)
    by_family: dict[str, dict[str, float]] = defaultdict(lambda: {"items": 0, "pass@1": 0.0})
    questions: dict[str, dict[str, int]] = defaultdict(lambda: {"right": 0, "wrong": 0, "unparsed": 0})
    for item, samples in zip(items, results, strict=True):
        verdicts = [verdict(r) for r in samples]
        for v in verdicts:
            counts[v] += 1
        c = verdicts.count("right")
        for k in ks:
            pass_k[k] += pass_at_k(n, c, k)
        fam = by_family[item["family"]]
        fam["items"] += 1
        fam["pass@1"] += c / n
        for r in samples:
            for q in r.per_question:
                questions[q["family"]][q["verdict"]] += 1
    total = len(items)
    report: dict[str, Any] = {
        "items": total,
        "n": n,
        **{f"pass@{k}": round(v / total, 6) if total else None for k, v in pass_k.items()},
        "samples": counts,
        "by_item_family": {
            f: {"items": int(v["items"]), "pass@1": round(v["pass@1"] / v["items"], 6)}
            for f, v in sorted(by_family.items())
        },
        "by_question_family": {
            f: {**v, "accuracy": round(v["right"] / max(1, sum(v.values())), 6)}
            for f, v in sorted(questions.items())
        },
    }
    return report


def incremental_consistency(
    items: Sequence[Mapping[str, Any]], results: Sequence[Sequence[ScoreResult]]
) -> dict[str, Any]:
    """REval's incremental consistency over the chain coverage → state → next_line → output.

    Items are grouped by ``case_id`` (one program and input). For sample s of a case, a link
    holds when every question of that family in the case's items is right in sample s; the
    case's score is the mean over samples of (links holding before the first broken one) / 4.
    Only cases with questions of all four families form a chain.
    """
    cases: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        cases[str(item.get("case_id"))].append(i)
    scores, full = [], 0
    for members in cases.values():
        families = {q["family"] for i in members for q in results[i][0].per_question}
        if not set(CHAIN) <= families:
            continue
        n = min(len(results[i]) for i in members)
        case_scores = []
        for s in range(n):
            ok = {f: True for f in CHAIN}
            for i in members:
                for q in results[i][s].per_question:
                    if q["family"] in ok and q["verdict"] != "right":
                        ok[q["family"]] = False
            prefix = 0
            for f in CHAIN:
                if not ok[f]:
                    break
                prefix += 1
            case_scores.append(prefix / len(CHAIN))
            full += prefix == len(CHAIN)
        scores.append(sum(case_scores) / n)
    return {
        "chain": list(CHAIN),
        "chains": len(scores),
        "score": round(sum(scores) / len(scores), 6) if scores else None,
        "fully_consistent_samples": full,
    }
