"""Reward throughput: our TRL reward functions vs the published way (a fresh interpreter per reward).

A batch of --n mixed completions (default 1,024: 512 white-box, 256 output, 128 input, 128
code generation with 5 tests each; right, wrong and unparsed answers in turn) is scored by our
reward functions exactly as TRL calls them (every function over the whole mixed batch, one after
the other), and each family alone. The published way runs one fresh ``python -c`` per completion:
``<program>\\nassert f(args) == <answer>`` for output and white-box items (only the output
assertion: its next-line and state answers were string compares, free here), the answer's
``assert f(<proposed>) == <output>`` after the program for input items, ``<code>\\n<tests>`` for
code generation; it is measured on a stratified subsample (--baseline-n, default 128) with a
thread pool of 64, which favours it slightly (no tail). Ours runs no code for unparsed answers (a
third of the input and code-generation completions here), the published way runs every one.

White-box items are real: the programs below are traced here (``sys.settrace``) to derive the
output, next-line and state questions. Targets (2 cores): ≥ 2,000/s for white-box and output,
≥ 100/s for code generation, ≥ 20× the published way overall.

Besides rates, both ways get CPU milliseconds per item (this process, its reaped children and,
for ours, the sandbox's fork server and the jobs it reaped): on a machine that other jobs load,
the wall-clock ratio flatters ours (the published way suffers more), the CPU ratio does not.
``--no-fork-server`` runs ours with a fresh interpreter per sandbox job (the fallback path).

    .venv/bin/python bench/rewards_throughput.py [--n 1024] [--baseline-n 128] [--workers N]
        [--no-fork-server] [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from factory.rewards import trl as rewards
from factory.sandbox.untrusted import fork as untrusted_fork
from factory.scoring.parse import answer_block, answer_lines, extract_code

# -- programs (white-box, output, input) -------------------------------------------------------

PROGRAMS: list[tuple[str, Callable[[random.Random], str]]] = [
    (
        "def f(xs):\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n"
        "        else:\n            total -= 1\n    return total\n",
        lambda r: repr([r.randint(0, 9) for _ in range(r.randint(2, 5))]),
    ),
    (
        "def f(s):\n    words = s.split()\n    out = []\n    for w in words:\n        out.append(w[::-1])\n"
        "    return ' '.join(out)\n",
        lambda r: repr(" ".join(r.choice(["ab", "cde", "xy", "q", "mno"]) for _ in range(r.randint(1, 4)))),
    ),
    (
        "def f(n):\n    a, b = 0, 1\n    while n > 0:\n        a, b = b, a + b\n        n -= 1\n"
        "    return a\n",
        lambda r: str(r.randint(1, 8)),
    ),
    (
        "def f(d, key):\n    if key in d:\n        d[key] += 1\n    else:\n        d[key] = 0\n"
        "    return sorted(d.items())\n",
        lambda r: f"{ {k: r.randint(0, 3) for k in r.sample('abc', r.randint(1, 3))} }, {r.choice('abcd')!r}",
    ),
    (
        "def f(xs, k):\n    seen = set()\n    result = []\n    for x in xs:\n        if x % k not in seen:\n"
        "            seen.add(x % k)\n            result.append(x)\n    return result\n",
        lambda r: f"{[r.randint(0, 12) for _ in range(r.randint(2, 6))]!r}, {r.randint(2, 4)}",
    ),
    (
        "def f(s):\n    count = {}\n    for ch in s:\n        count[ch] = count.get(ch, 0) + 1\n"
        "    best = max(count, key=count.get)\n    return (best, count[best])\n",
        lambda r: repr("".join(r.choice("aab") for _ in range(r.randint(1, 6)))),
    ),
]


def trace(source: str, args: str) -> tuple[Any, list[tuple[int, dict[str, tuple[str, str]]]]]:
    """The output and the steps (line, state at the frame's next event) of ``f(args)``."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<bench>", "exec"), namespace)
    steps: list[tuple[int, dict[str, tuple[str, str]]]] = []
    pending: list[int] = []

    def tracer(frame: Any, event: str, _arg: Any) -> Any:
        if frame.f_code.co_filename != "<bench>":
            return tracer
        if pending:
            steps[pending.pop()][1].update(
                {k: (repr(v), type(v).__name__) for k, v in frame.f_locals.items()}
            )
        if event == "line":
            steps.append((frame.f_lineno, {}))
            pending.append(len(steps) - 1)
        return tracer

    call_args = ast.literal_eval(f"({args},)")
    sys.settrace(tracer)
    try:
        output = namespace["f"](*call_args)
    finally:
        sys.settrace(None)
    return output, steps


def white_box_item(index: int, family: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """An item with its gold answer lines and a wrong variant (``Random(index)``)."""
    rnd = random.Random(index)
    source, make_args = PROGRAMS[index % len(PROGRAMS)]
    args = make_args(rnd)
    output, steps = trace(source, args)
    lines = source.splitlines()
    questions = [{"family": "output", "answer": repr(output), "answer_type": type(output).__name__}]
    gold = [f"assert f({args}) == {output!r}"]
    wrong = [f"assert f({args}) == {[output]!r}"]
    if family == "white_box":
        picks = rnd.sample(range(len(steps)), min(len(steps), 5))
        for i in picks:  # next_line
            line = steps[i][0]
            k = sum(1 for s in steps[: i + 1] if s[0] == line)
            nxt = steps[i + 1][0] if i + 1 < len(steps) else -1
            questions.append({"family": "next_line", "line": line, "occurrence": k, "answer": nxt})
            gold.append(lines[nxt - 1].strip() if nxt > 0 else "-1")
            wrong.append(lines[line - 1].strip())
        for i in rnd.sample(range(len(steps)), min(len(steps), 5)):  # state
            line, state = steps[i]
            if not state:
                continue
            var = rnd.choice(sorted(state))
            value, type_name = state[var]
            k = sum(1 for s in steps[: i + 1] if s[0] == line)
            questions.append(
                {
                    "family": "state",
                    "line": line,
                    "occurrence": k,
                    "var": var,
                    "answer": f"{value}; {type_name}",
                }
            )
            gold.append(f"{value}; {type_name}")
            wrong.append(f"{value}; float" if rnd.random() < 0.5 else value)
    item = {
        "family": family,
        "source": source,
        "entry": "f",
        "args": args,
        "questions": json.dumps(questions),
    }
    return item, gold, wrong


def input_item(index: int) -> tuple[dict[str, Any], list[str], list[str]]:
    """An input item; the right answer is another argument list with the same output when one of
    a few draws has it (so it runs), else the item's own (which needs no run)."""
    rnd = random.Random(10_000 + index)
    source, make_args = PROGRAMS[index % len(PROGRAMS)]
    args = make_args(rnd)
    output, _ = trace(source, args)
    right = args
    for _ in range(20):
        other = make_args(rnd)
        if other != args and trace(source, other)[0] == output:
            right = other
            break
    wrong_args = make_args(rnd)
    for _ in range(50):
        if trace(source, wrong_args)[0] != output:
            break
        wrong_args = make_args(rnd)
    questions = [{"family": "input", "answer": repr(output), "answer_type": type(output).__name__}]
    item = {
        "family": "input",
        "source": source,
        "entry": "f",
        "args": args,
        "questions": json.dumps(questions),
    }
    return item, [f"assert f({right}) == {output!r}"], [f"assert f({wrong_args}) == {output!r}"]


# -- code generation ----------------------------------------------------------------------------

CODEGEN: list[tuple[str, str, str, list[str]]] = [
    (
        "is_palindrome",
        "def is_palindrome(s):\n    s = ''.join(c.lower() for c in s if c.isalnum())\n"
        "    return s == s[::-1]\n",
        "def is_palindrome(s):\n    return s == s[::-1]\n",
        [
            "assert is_palindrome('abba')",
            "assert not is_palindrome('abc')",
            "assert is_palindrome('A man, a plan, a canal: Panama')",
            "assert is_palindrome('')",
            "assert is_palindrome('Racecar')",
        ],
    ),
    (
        "count_vowels",
        "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
        "def count_vowels(s):\n    return sum(1 for c in s if c in 'aeiou')\n",
        [
            "assert count_vowels('hello') == 2",
            "assert count_vowels('') == 0",
            "assert count_vowels('AEIOU') == 5",
            "assert count_vowels('xyz') == 0",
            "assert count_vowels('Programming') == 3",
        ],
    ),
    (
        "running_max",
        "def running_max(xs):\n    out, best = [], None\n    for x in xs:\n"
        "        best = x if best is None or x > best else best\n        out.append(best)\n    return out\n",
        "def running_max(xs):\n    return sorted(xs)\n",
        [
            "assert running_max([1, 3, 2]) == [1, 3, 3]",
            "assert running_max([]) == []",
            "assert running_max([5, 4, 3]) == [5, 5, 5]",
            "assert running_max([-1, -2, 0]) == [-1, -1, 0]",
            "assert running_max([2, 2]) == [2, 2]",
        ],
    ),
    (
        "chunk",
        "def chunk(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]\n",
        "def chunk(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs) - n + 1, n)]\n",
        [
            "assert chunk([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]",
            "assert chunk([1, 2, 3], 2) == [[1, 2], [3]]",
            "assert chunk([], 3) == []",
            "assert chunk([1], 1) == [[1]]",
            "assert chunk(list(range(5)), 4) == [[0, 1, 2, 3], [4]]",
        ],
    ),
]


def codegen_item(index: int) -> tuple[dict[str, Any], str, str]:
    entry, good, bad, tests = CODEGEN[index % len(CODEGEN)]
    return {"family": "codegen", "entry": entry, "tests": json.dumps(tests)}, good, bad


# -- the batch ------------------------------------------------------------------------------------


def wrap(lines: list[str]) -> str:
    return (
        "<reasoning>Let me trace the program step by step.</reasoning>\n<answer>\n"
        + "\n".join(lines)
        + "\n</answer>"
    )


def build_batch(mix: dict[str, int]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Items, completions and their kinds (right / wrong / unparsed, in turn)."""
    items, completions, kinds = [], [], []
    for family, count in mix.items():
        for i in range(count):
            kind = ("right", "wrong", "unparsed")[i % 3]
            if family == "codegen":
                item, good, bad = codegen_item(i)
                fence = "```python\n{}```"
                text = {
                    "right": wrap([fence.format(good)]),
                    "wrong": wrap([fence.format(bad)]),
                    "unparsed": "<reasoning>Hmm.</reasoning>\n<answer>\n</answer>\nI am not sure.",
                }[kind]
            else:
                if family == "input":
                    item, gold, wrong = input_item(i)
                else:
                    item, gold, wrong = white_box_item(i, family)
                text = {
                    "right": wrap(gold),
                    "wrong": wrap(wrong),
                    "unparsed": wrap(gold[:-1]) if len(gold) > 1 else "The answer is obvious.",
                }[kind]
            items.append(item)
            completions.append(text)
            kinds.append(kind)
    return items, completions, kinds


def columns(items: list[dict[str, Any]]) -> dict[str, list[Any]]:
    keys = ("family", "source", "entry", "args", "questions", "tests")
    return {k: [item.get(k) for item in items] for k in keys}


# -- ours -----------------------------------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU seconds used so far by this process, its reaped children and, when it runs, the
    fork server and the jobs it has reaped (they are not this process's children)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    server = untrusted_fork.running()  # never starts one just to measure
    if server is not None:
        time.sleep(0.05)  # let it reap the last released jobs
        total += sum(server.cpu_seconds())
    return total


def bench_ours(items: list[dict[str, Any]], completions: list[str], workers: int | None) -> dict[str, Any]:
    """Every reward function over the batch, as TRL calls them; rewards/s = completions / seconds."""
    funcs = rewards.reward_funcs(workers=workers)
    cols = columns(items)
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    outs = [fn(completions=completions, prompts=[""] * len(items), **cols) for fn in funcs]
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    combined = [next((v for v in vals if v is not None), None) for vals in zip(*outs, strict=True)]
    assert all(v is not None for v in combined), "a family no function judged"
    n = len(items)
    return {"n": n, "seconds": seconds, "rate": n / seconds, "cpu_ms": 1000 * cpu / n, "rewards": combined}


# -- the published way ----------------------------------------------------------------------------


def published_script(item: dict[str, Any], completion: str) -> str:
    if item["family"] == "codegen":
        return extract_code(completion) + "\n" + "\n".join(json.loads(item["tests"])) + "\n"
    block = answer_block(completion)
    lines = answer_lines(block) if block is not None else []
    assertion = lines[0] if lines else "assert False"
    return f"{item['source']}\n{assertion}\n"


def published_one(job: tuple[dict[str, Any], str]) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", published_script(*job)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
    )
    return proc.returncode == 0


def bench_published(jobs: list[tuple[dict[str, Any], str]], threads: int) -> dict[str, Any]:
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        passed = sum(pool.map(published_one, jobs))
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    n = len(jobs)
    return {"n": n, "seconds": seconds, "rate": n / seconds, "cpu_ms": 1000 * cpu / n, "passed": passed}


def stratified(indices_by_family: dict[str, list[int]], total: int, n: int) -> dict[str, list[int]]:
    return {f: idx[: max(1, round(n * len(idx) / total))] for f, idx in indices_by_family.items()}


# -- main -----------------------------------------------------------------------------------------

TARGETS = {"white_box": 2000.0, "output": 2000.0, "codegen": 100.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1024, help="completions in the mixed batch")
    parser.add_argument("--mix", default="white_box=4,output=2,input=1,codegen=1", help="family=weight,...")
    parser.add_argument("--baseline-n", type=int, default=128, help="published-way subsample")
    parser.add_argument("--baseline-threads", type=int, default=64)
    parser.add_argument("--workers", type=int, default=None, help="sandbox jobs in flight (default: ours)")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    parser.add_argument(
        "--no-fork-server", action="store_true", help="ours with a fresh interpreter per sandbox job"
    )
    opts = parser.parse_args()

    weights = {k: float(v) for k, v in (p.split("=") for p in opts.mix.split(","))}
    mix = {f: int(opts.n * w / sum(weights.values())) for f, w in weights.items()}
    mix[next(iter(mix))] += opts.n - sum(mix.values())
    items, completions, kinds = build_batch(mix)
    by_family: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        by_family.setdefault(item["family"], []).append(i)

    workers = opts.workers or rewards.default_workers()
    if opts.no_fork_server:
        untrusted_fork.set_enabled(False)
    sandbox = "a fresh interpreter per job" if opts.no_fork_server else "fork server"
    print(f"load average at start {os.getloadavg()[0]:.2f}; untrusted sandbox: {sandbox}")
    print(
        f"python {platform.python_version()}, {len(os.sched_getaffinity(0))} usable cores, "
        f"sandbox workers {workers}; batch {len(items)}: "
        + ", ".join(f"{f} {len(ix)}" for f, ix in by_family.items())
        + "; right/wrong/unparsed in turn"
    )

    bench_ours(items[:32] + items[-32:], completions[:32] + completions[-32:], workers)  # warm up
    overall = bench_ours(items, completions, workers)
    per_family = {}
    for family, idx in by_family.items():
        per_family[family] = bench_ours([items[i] for i in idx], [completions[i] for i in idx], workers)

    sample = stratified(by_family, len(items), opts.baseline_n)
    base_family = {
        f: bench_published([(items[i], completions[i]) for i in idx], opts.baseline_threads)
        for f, idx in sample.items()
    }
    all_jobs = [(items[i], completions[i]) for idx in sample.values() for i in idx]
    base_overall = bench_published(all_jobs, opts.baseline_threads)

    right = {k: 0 for k in ("right", "wrong", "unparsed")}
    for kind, reward in zip(kinds, overall["rewards"], strict=True):
        right[kind] += reward > 0
    print(f"completions with a reward > 0, by kind: {right} (right ones should all be > 0, unparsed none)")
    print(
        f"published way: a fresh `python -c` per completion, {opts.baseline_threads} threads, "
        f"on a stratified subsample of {base_overall['n']}"
    )
    header = (
        f"{'family':<10} {'n':>5} {'ours/s':>10} {'published/s':>12} {'ratio':>8}  "
        f"{'CPU ms/item ours':>16} {'published':>9} {'ratio':>7}  target"
    )
    print(header)
    print("-" * len(header))
    report: dict[str, Any] = {"workers": workers, "mix": mix, "families": {}}
    rows = [*per_family.items(), ("overall", overall)]
    for family, ours in rows:
        base = base_overall if family == "overall" else base_family[family]
        ratio = ours["rate"] / base["rate"]
        if family == "overall":
            target, met = "≥ 20× published", ratio >= 20
        elif family in TARGETS:
            target, met = f"≥ {TARGETS[family]:,.0f}/s", ours["rate"] >= TARGETS[family]
        else:
            target, met = "-", None
        flag = "" if met is None else (" MET" if met else " MISSED")
        cpu_ratio = base["cpu_ms"] / ours["cpu_ms"] if ours["cpu_ms"] > 0 else float("inf")
        print(
            f"{family:<10} {ours['n']:>5} {ours['rate']:>10,.0f} {base['rate']:>12,.1f} "
            f"{ratio:>7,.1f}×  {ours['cpu_ms']:>16.3f} {base['cpu_ms']:>9.2f} {cpu_ratio:>6,.1f}×  "
            f"{target}{flag}"
        )
        report["families"][family] = {
            "n": ours["n"],
            "ours_per_s": ours["rate"],
            "published_per_s": base["rate"],
            "published_n": base["n"],
            "ratio": ratio,
            "ours_cpu_ms_per_item": ours["cpu_ms"],
            "published_cpu_ms_per_item": base["cpu_ms"],
            "cpu_ratio": cpu_ratio,
            "target_met": met,
        }
    print(
        f"load average at end {os.getloadavg()[0]:.2f}; CPU ms/item counts this process, its "
        "children and the fork server with its jobs (the ratio that other load does not skew)"
    )
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
