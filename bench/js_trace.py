"""JavaScript tracer throughput: traced cases/s, instrumentation and run (issue 19: trace + tasks
≥ 300 cases/s on 2 cores).

Representative programs (the shapes the JavaScript grammar draws: loops over arrays and strings,
a helper, ``while``, ``else if`` chains, Sets, Maps and objects), several arguments each. Prints:

1. instrumenting a program (``instrument``, its cache cleared), µs per program;
2. traced cases/s with ``trace_calls_js``: the tracer facet's ``trace`` job kind on a pool of one
   ``node`` worker, each case in a fresh ``vm`` context (the pool started, payloads instrumented
   in the parent, the run, the results read back into Python);
3. the same on 2 cores: a pool of two ``node`` workers;
4. the naive way, a fresh pool (one ``node``) per case (``trace_call_js`` per case), on a few cases;
5. the share of a case spent creating its fresh ``vm`` context (timed in ``node``).

Run: ``.venv/bin/python bench/js_trace.py [--cases N]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factory.languages.javascript.instrument import instrument  # noqa: E402
from factory.languages.javascript.trace_calls import trace_call_js, trace_calls_js  # noqa: E402

PROGRAMS: list[tuple[str, list[str]]] = [
    (
        """function f(xs) {
  let total = 0;
  for (const x of xs) {
    if (x % 2 === 0) {
      total += x;
    } else if (x > 5) {
      total -= 1;
    } else {
      total += 2 * x;
    }
  }
  return total;
}
""",
        ["[1, 2, 3, 8, 9]", "[]", "[4, 4, 7, 10, 11, 12, 1]", "[6]"],
    ),
    (
        """function clean(s) {
  const t = s.trim().toLowerCase();
  return t.replace("a", "4");
}
function f(words) {
  const out = [];
  for (let i = 0; i < words.length; i++) {
    const w = clean(words[i]);
    if (w.length > 2) {
      out.push(w);
    }
  }
  return out.join("-");
}
""",
        ['[" Apple ", "ox", "Banana"]', '["abc", "de", "fgh", "ij"]', "[]"],
    ),
    (
        """function f(s) {
  let count = 0;
  let best = "";
  for (const ch of s) {
    if ("aeiou".includes(ch)) {
      count++;
    } else if (ch > best) {
      best = ch;
    }
  }
  return [count, best];
}
""",
        ['"hello world"', '"javascript"', '""', '"queueing"'],
    ),
    (
        """function f(n) {
  let a = 0;
  let b = 1;
  let steps = 0;
  while (b < n) {
    const c = a + b;
    a = b;
    b = c;
    steps += 1;
  }
  return {last: a, next: b, steps: steps};
}
""",
        ["10", "100", "1", "1000"],
    ),
    (
        """function f(xs) {
  const seen = new Set();
  const counts = new Map();
  for (const x of xs) {
    seen.add(x % 4);
    counts.set(x % 3, (counts.get(x % 3) || 0) + 1);
  }
  return [seen, counts];
}
""",
        ["[1, 2, 3, 4, 5, 6]", "[7, 7, 7]", "[0]"],
    ),
    (
        """function f(o) {
  const keys = Object.keys(o).sort();
  let acc = [];
  for (const k of keys) {
    const v = o[k];
    if (v > 1) {
      acc = acc.concat([k]);
    }
  }
  return acc;
}
""",
        ['{"b": 2, "a": 3, "c": 0}', "{}", '{"x": 5}'],
    ),
    (
        """function f(xs, k) {
  const ys = xs.slice();
  ys.sort((a, b) => a - b);
  const top = ys.slice(-k);
  let i = 0;
  while (i < top.length && top[i] < 0) {
    i++;
  }
  return top.slice(i);
}
""",
        ["[3, -1, 4, 1, -5], 3", "[1, 2], 5", "[-2, -3, 9], 2"],
    ),
    (
        """function f(grid) {
  let total = 0;
  for (let r = 0; r < grid.length; r++) {
    for (let c = 0; c < grid[r].length; c++) {
      if (r === c) {
        continue;
      }
      total += grid[r][c];
    }
  }
  return total;
}
""",
        ["[[1, 2], [3, 4]]", "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]", "[]"],
    ),
]


def cases(n: int) -> list[tuple[str, str, str]]:
    """``n`` cases cycling over the programs' arguments."""
    every = [(source, "f", args) for source, many in PROGRAMS for args in many]
    return [every[i % len(every)] for i in range(n)]


def instrument_us(repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        instrument.cache_clear()
        start = time.perf_counter()
        for source, _ in PROGRAMS:
            instrument(source)
        times.append((time.perf_counter() - start) / len(PROGRAMS))
    return statistics.median(times) * 1e6


def context_ms() -> float:
    """Median ms to create and scrub a fresh ``vm`` context, in ``node``."""
    script = """
const vm = require('vm');
const times = [];
for (let i = 0; i < 200; i++) {
  const t = process.hrtime.bigint();
  const c = vm.createContext({}, { codeGeneration: { strings: false, wasm: false } });
  vm.runInContext('delete globalThis.Date; delete Math.random;', c);
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
console.log(times[100]);
"""
    node = shutil.which("node")
    assert node is not None
    return float(subprocess.run([node, "-e", script], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    options = parser.parse_args()
    todo = cases(options.cases)

    print(f"instrument: {instrument_us():.0f} µs per program ({len(PROGRAMS)} programs)")

    trace_calls_js(todo[:20])  # warm: imports, params
    instrument.cache_clear()
    start = time.perf_counter()
    results = trace_calls_js(todo)
    one = len(todo) / (time.perf_counter() - start)
    statuses = {r["status"] for r in results}
    assert statuses == {"ok"}, statuses
    steps = statistics.mean(len(r["steps"]) for r in results)
    print(f"one node worker: {one:.0f} cases/s ({len(todo)} cases, {steps:.1f} steps per case on average)")

    instrument.cache_clear()
    start = time.perf_counter()
    trace_calls_js(todo, workers=2)
    two = len(todo) / (time.perf_counter() - start)
    print(f"two node workers (2 cores): {two:.0f} cases/s")

    few = todo[:20]
    start = time.perf_counter()
    for source, entry, args in few:
        trace_call_js(source, entry, args)
    naive = len(few) / (time.perf_counter() - start)
    print(f"a fresh node per case: {naive:.1f} cases/s ({one / naive:.0f}x slower than one process)")

    ctx = context_ms()
    print(f"fresh vm context: {ctx:.2f} ms, {ctx * one / 10:.0f}% of a case in one process")


if __name__ == "__main__":
    main()
