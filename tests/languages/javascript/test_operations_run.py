"""Every operation of grammars/javascript runs in node on inputs the grammar itself draws.

For each operation variant and binding of its type variables, receivers and free arguments are
drawn from the grammar's strategies (as JavaScript values: ``drawn.js_value``), arguments with a
``from:`` source are written by the real source functions, the ``requires`` guards are evaluated
in node and, when they hold, the template runs there. Asserted, per operation:

- it never throws when its guards hold (a failure means a missing ``requires``);
- it rarely gives a value with no literal (NaN, -0, Infinity, undefined where a value is promised);
- its result has the kind ``returns`` names, and an operation without ``mutates`` leaves its
  receiver as it was;
- its ``length`` claims hold (the synthesizer's minimum lengths rely on them).
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import subprocess
from typing import Any

import pytest

from factory.grammar.loader import load_grammar
from factory.grammar.model import Operation
from factory.grammar.sources import IMPLEMENTATIONS
from factory.grammar.types import Type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.languages import language
from factory.languages.javascript.values import js_value

GRAMMAR = load_grammar("grammars/javascript")
JS = language("javascript")
NODE = shutil.which("node")
DRAWS = 12
# Runs each case in a fresh context (its own Set, Map, Array: the helpers run there too): the
# guards, then the template, and what the checks need; ``size`` of a value with a length.
HELPERS = r"""
const size = (v) => (typeof v === 'string' || Array.isArray(v)) ? v.length
  : (v instanceof Set || v instanceof Map) ? v.size
  : (v && typeof v === 'object') ? Object.keys(v).length : null;
const key = (v) => JSON.stringify(v, (k, x) => x instanceof Set ? ['Set', ...x]
  : x instanceof Map ? ['Map', ...x] : x);
const kind = (v) => Array.isArray(v) ? 'array' : v instanceof Set ? 'set' : v instanceof Map ? 'map'
  : v === null ? 'null' : typeof v;
const literal = (v) => typeof v === 'number' ? Number.isFinite(v) && !Object.is(v, -0)
  : v === undefined ? false : Array.isArray(v) ? v.every(literal)
  : v instanceof Set ? [...v].every(literal)
  : v instanceof Map ? [...v].every(([a, b]) => literal(a) && literal(b))
  : (v && typeof v === 'object') ? Object.values(v).every(literal) : true;
"""
RUNNER = (
    "const HELPERS = "
    + json.dumps(HELPERS)
    + r""";
const vm = require('vm');
const out = [];
for (const c of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {
  try {
    out.push(vm.runInContext(`${HELPERS}(() => {
      let recv = ${c.recv};
      if (!(${c.guard})) return {skipped: true};
      const before = key(recv), lenBefore = size(recv);
      const result = (() => { ${c.statement ? c.code + ';' : 'return ' + c.code + ';'} })();
      return {kind: kind(result), literal: literal(result), changed: key(recv) !== before,
              lenBefore, lenAfter: size(recv), lenResult: size(result)};
    })()`, vm.createContext({})));
  } catch (error) {
    out.push({error: `${error.name}: ${error.message}`});
  }
}
console.log(JSON.stringify(out));
"""
)
KINDS = {"number": "number", "string": "string", "boolean": "boolean", "array": "array", "pair": "array"}
KINDS |= {"object": "object", "set": "set", "map": "map"}


class Context:
    """The synthesizer's side of a value source for one draw (``SourceContext``)."""

    def __init__(self, rng: random.Random, recv: Any, recv_len: int) -> None:
        self.rng, self.recv, self.recv_len = rng, recv, recv_len

    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: list[Any]) -> Any:
        return self.rng.choice(options)

    def min_len(self, placeholder: str) -> int:
        return self.recv_len if placeholder == "recv" else 0

    def constant(self, t: Type, short: bool = False) -> str:
        spec = GRAMMAR.types[t.name]
        options = [c for c in spec.constants if not short or len(c) <= 4] or list(spec.constants)
        return self.rng.choice(options) if options else JS.literal(_draw(t, self.rng.randint(0, 99))[0])

    def variable_of(self, t: Type) -> str | None:
        # An element of the receiver half of the time (a loop variable over it, say).
        items = list(self.recv) if isinstance(self.recv, (list, str)) else []
        if items and self.rng.random() < 0.5:
            return JS.literal(self.rng.choice(items))
        return None

    def prefers(self, name: str) -> bool:
        return False  # no statement around the operation

    def literal(self, value: object) -> str:
        return JS.literal(value)

    def text(self, placeholder: str) -> str:
        return placeholder


def _draw(t: Type, seed: int, n: int = DRAWS) -> list[Any]:
    return [js_value(v, t) for v in draw_examples(strategy_for(GRAMMAR, t), n, seed)]


def _value_guarded(op: Operation) -> bool:
    """Whether a guard of ``op`` depends on values, not lengths (``digits``): it holds on fewer
    draws, so the operation gets more of them and a lower floor."""
    return any(not GRAMMAR.predicates[r.name].min_len for r in op.requires)


def _bindings(op: Operation) -> list[dict[str, Type]]:
    names = sorted(op.type_variables)
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(GRAMMAR.element_types, repeat=len(names))
    ]


def _cases(op: Operation, binding: dict[str, Type], seed: int) -> list[dict[str, Any]]:
    recv_type = op.receiver.substitute(binding)
    free = {
        a.name: _draw(a.type.substitute(binding), seed + i + 1)
        for i, a in enumerate(op.args)
        if a.source is None
    }
    cases = []
    for i, recv in enumerate(_draw(recv_type, seed, DRAWS * 4 if _value_guarded(op) else DRAWS)):
        rng = random.Random(f"{op.op_id}:{seed}:{i}")
        ctx = Context(
            rng, recv, len(recv) if isinstance(recv, (list, str, dict)) else len(getattr(recv, "items", ()))
        )
        values = {"recv": "recv"}
        for arg in op.args:
            if arg.source is None:
                values[arg.name] = JS.literal(free[arg.name][i % len(free[arg.name])])
            else:
                source_args = [a for a, lit in zip(arg.source.args, arg.source.literal_args, strict=True)]
                values[arg.name] = IMPLEMENTATIONS[arg.source.name](
                    ctx, arg.type.substitute(binding), *source_args
                )
        guards = []
        for req in op.requires:
            pred = GRAMMAR.predicates[req.name]
            bound = {
                p: (JS.literal(a) if lit else values[a])
                for p, a, lit in zip(pred.params, req.args, req.literal_args, strict=True)
            }
            guards.append(JS.fill(pred.guard, bound))
        cases.append({
            "recv": JS.literal(recv), "guard": " && ".join(f"({g})" for g in guards) or "true",
            "code": JS.fill(op.template, values), "statement": op.statement,
        })  # fmt: skip
    return cases


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """(cases, node's results) per operation variant and binding, in one node process."""
    assert NODE is not None, "node (Node.js >= 20) is not on PATH"
    jobs = {}
    for index, op in enumerate(GRAMMAR.operations):
        for b, binding in enumerate(_bindings(op)):
            jobs[(op.op_id, index * 10 + b)] = (op, binding, _cases(op, binding, index * 100 + b))
    flat = [c for _, _, cases in jobs.values() for c in cases]
    done = subprocess.run(
        [NODE, "-e", RUNNER], input=json.dumps(flat), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    ran = iter(json.loads(done.stdout))
    return {k: (cases, [next(ran) for _ in cases]) for k, (_, _, cases) in jobs.items()}


@pytest.mark.skipif(NODE is None, reason="node (Node.js >= 20) is not on PATH")
def test_every_operation_runs_as_its_grammar_entry_says(results: dict[Any, Any]) -> None:
    problems = []
    ops = {op.op_id: op for op in GRAMMAR.operations}
    for (op_id, _), (cases, ran) in results.items():
        op = ops[op_id]
        kept = [(c, r) for c, r in zip(cases, ran, strict=True) if not r.get("skipped")]
        if len(kept) < (1 if _value_guarded(op) else len(cases) // 4):
            problems.append(f"{op_id}: guards held on {len(kept)} of {len(cases)} draws")
        no_literal = 0
        for case, r in kept:
            where = f"{op_id}: {case['code']} on {case['recv']}"
            if "error" in r:
                problems.append(f"{where}: {r['error']}")
                continue
            if op.returns is not None:
                no_literal += not r["literal"]
                want = KINDS.get(op.returns.name)
                if want is not None and r["literal"] and r["kind"] != want:
                    problems.append(f"{where}: gave a {r['kind']}, not a {want}")
            if r["changed"] and not op.mutates:
                problems.append(f"{where}: changed its receiver without mutates")
            if op.length_result == "same" and r["lenResult"] != r["lenBefore"]:
                problems.append(f"{where}: length.result same, {r['lenBefore']} -> {r['lenResult']}")
            if op.length_result == "grow" and (r["lenResult"] or 0) < r["lenBefore"]:
                problems.append(f"{where}: length.result grow, {r['lenBefore']} -> {r['lenResult']}")
            floor = {"same": 0, "grow": 1, "shrink": -1}.get(op.length_recv)
            if (
                op.mutates
                and floor is not None
                and r["lenAfter"] is not None
                and r["lenAfter"] < r["lenBefore"] + floor
            ):
                problems.append(f"{where}: length.recv {op.length_recv}, {r['lenBefore']} -> {r['lenAfter']}")
        if no_literal > len(kept) // 4:
            problems.append(f"{op_id}: {no_literal} of {len(kept)} results have no literal")
    assert not problems, "\n".join(problems[:40])
