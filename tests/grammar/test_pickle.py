"""A grammar pickled in one process and unpickled in another (a Ray actor's, with its own hash
seed) draws the same programs as a grammar loaded there."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from factory.grammar.types import Type, parse_type

DRAW = """
import hashlib, pickle, sys
from factory.grammar.loader import load_grammar
from factory.params import SynthesizeParams
from factory.synth import stage
if sys.argv[1] == "-":
    grammar = load_grammar("grammars/python")
else:
    grammar = pickle.loads(open(sys.argv[1], "rb").read())
params = SynthesizeParams()
jobs = list(stage.plan(grammar, params))[800:1100]  # tiers 3-5: deep programs, many type lookups
drawn = stage._drawn((grammar, 42, params), 1, jobs)
print(hashlib.sha256(repr([(d[0], d[3].source if d[3] else None) for d in drawn]).encode()).hexdigest())
"""


def _draw(pickled: str, hash_seed: int) -> str:
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": str(hash_seed)}
    proc = subprocess.run(
        [sys.executable, "-c", DRAW, pickled],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    return proc.stdout.strip()


def test_a_type_unpickled_hashes_as_a_type_made_here() -> None:
    t = parse_type("dict[str, list[int]]")
    copy = pickle.loads(pickle.dumps(t))
    assert copy == t and hash(copy) == hash(t) and copy._vars == t._vars
    assert pickle.loads(pickle.dumps(Type("T"))).is_var


def test_a_grammar_pickled_under_another_hash_seed_draws_the_same_programs(tmp_path: Path) -> None:
    dump = "import pickle, sys; from factory.grammar.loader import load_grammar; " + (
        "g = load_grammar('grammars/python'); g.targets(); open(sys.argv[1], 'wb').write(pickle.dumps(g))"
    )
    path = tmp_path / "grammar.pkl"
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "1"}
    subprocess.run([sys.executable, "-c", dump, str(path)], env=env, check=True, timeout=120)
    assert _draw(str(path), hash_seed=2) == _draw("-", hash_seed=2)
