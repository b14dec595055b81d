"""Normal forms: renaming does not hide a program; structure and literals do matter."""

from __future__ import annotations

import ast
import re

import pytest

from factory.errors import UserError
from factory.params import AssembleParams
from factory.release.benchmarks import BenchmarkIndex, load_records
from factory.release.normalize import ast_keys, fingerprint, ngrams, parse, program_key, token_stream

A = "def f(xs, k):\n    '''doc'''\n    out = xs.copy()  # note\n    out.append(k)\n    return len(out) + 1\n"
B = "def g(items, v):\n    res = items.copy()\n    res.append(v)\n    return len(res)+1\n"


def test_renaming_formatting_comments_and_docstrings_do_not_matter() -> None:
    a, b = parse(A), parse(B)
    assert program_key(a) == program_key(b)
    assert ast_keys(a) == ast_keys(b)
    assert token_stream(a) == token_stream(b)
    assert "append" in token_stream(a) and "len" in token_stream(a)  # attributes and builtins stay


def test_structure_and_literals_matter_unless_abstracted() -> None:
    other_literal = B.replace("+1", "+2")
    other_op = B.replace(".append(", ".remove(")
    assert program_key(parse(other_literal)) != program_key(parse(B))
    assert program_key(parse(other_literal), "abstract") == program_key(parse(B), "abstract")
    assert program_key(parse(other_op), "abstract") != program_key(parse(B), "abstract")


def test_a_fingerprint_is_the_keys_and_ngrams_of_the_program() -> None:
    nested = A + "\nclass K:\n    def m(self):\n        'doc'\n        return 1\n"
    for source in (A, B, nested):
        for literals in ("keep", "abstract"):
            program, tree = fingerprint(source, 12, literals), parse(source)
            assert program is not None and tree is not None
            assert program.key == program_key(tree, literals)
            assert program.keys == ast_keys(tree, literals)
            assert program.grams == ngrams(token_stream(tree), 12)
    tree = parse(nested)
    assert tree is not None and len(ast_keys(tree)) == 3  # the module, f, K.m
    assert "doc" not in ast.unparse(tree)  # docstrings of nested definitions go too
    assert fingerprint("def f(:\n", 12) is None


@pytest.fixture(scope="module")
def index() -> BenchmarkIndex:
    p = AssembleParams()
    return BenchmarkIndex.build(p.benchmarks, p.ngram, p.ngram_threshold, common=p.ngram_common)


def test_every_renamed_cruxeval_program_is_found(
    index: BenchmarkIndex, cruxeval_records: list, renamed
) -> None:
    for record in cruxeval_records:
        assert index.match(renamed(record["code"])) == ("cruxeval", "ast"), record["id"]


def test_an_edited_benchmark_program_is_found_by_ngrams(
    index: BenchmarkIndex, cruxeval_records: list, renamed
) -> None:
    """Renamed and one literal changed: no AST key matches, the n-grams still do (most programs)."""
    found = edited = 0
    for record in cruxeval_records[:200]:
        source = renamed(record["code"])
        changed = re.sub(r"\b(\d+)\b", lambda m: str(int(m.group(1)) + 7), source, count=1)
        if changed == source:
            continue
        edited += 1
        hit = index.match(changed)
        found += hit is not None and hit[0] == "cruxeval" and hit[1] == "ngram"
    assert edited > 50 and found / edited > 0.6


def test_a_program_of_ours_is_not_found(index: BenchmarkIndex) -> None:
    src = (
        "def f(text, k):\n    parts = text.split(',')\n    parts.insert(k % 3, text.upper())\n"
        "    return '-'.join(parts)\n"
    )
    assert index.match(src) is None


def test_idioms_of_many_benchmark_programs_are_no_contamination(index: BenchmarkIndex) -> None:
    """A tier-1 ``set.len`` program of the default data: 13 of its 21 12-grams are in MBPP, but each
    in 3 to 74 MBPP programs (``def _(_, _): _ = len(_)``), none in 10 or fewer."""
    src = (
        "def f(allowed, keywords):\n    num_unique = len(keywords)\n    size = len(allowed)\n"
        "    return (num_unique, size)\n"
    )
    p = AssembleParams()
    every_gram = BenchmarkIndex.build(p.benchmarks, p.ngram, p.ngram_threshold)
    assert every_gram.match(src) == ("mbpp", "ngram")
    assert index.match(src) is None
    assert len(every_gram.grams) > len(index.grams) > 0.9 * len(every_gram.grams)  # few are idioms


def test_broken_benchmark_files_are_user_errors(tmp_path) -> None:
    with pytest.raises(UserError, match="benchmark file not found"):
        load_records(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"code": 1\n')
    with pytest.raises(UserError, match="not a JSON Lines"):
        load_records(bad)
