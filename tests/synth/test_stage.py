"""The synthesize stage: even coverage of targets, stats, byte-identical output, new types."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from factory.errors import UserError
from factory.grammar.loader import load_grammar
from factory.inputs.stage import run_inputs_stage
from factory.io import read_table, shard_paths
from factory.params import ExecuteParams, InputsParams, SynthesizeParams
from factory.synth.stage import run_synthesize_stage

FIXTURES = Path(__file__).parent / "fixtures"


def _run(tmp: Path, name: str, **overrides) -> tuple[Path, dict]:
    params = SynthesizeParams(
        tiers=[1, 3, 6], **{"programs_per_target_tier": 1, "reserve_per_target": 0, **overrides}
    )
    stats = run_synthesize_stage(5, params, tmp / name, tmp / f"{name}.json")
    return tmp / name, stats.to_dict()


def test_same_params_and_seed_give_byte_identical_shards(tmp_path: Path) -> None:
    a, _ = _run(tmp_path, "a")
    b, _ = _run(tmp_path, "b")
    files_a, files_b = shard_paths(a), shard_paths(b)
    assert [p.name for p in files_a] == [p.name for p in files_b]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(files_a, files_b, strict=True))


def test_every_target_is_exercised_evenly_and_stats_add_up(tmp_path: Path) -> None:
    out, stats = _run(tmp_path, "p")
    table = read_table(out)
    grammar = load_grammar("grammars/python")
    assert stats["in"] == 3 * len(grammar.targets())
    assert stats["out"] == table.num_rows
    assert stats["in"] == stats["out"] + stats["dropped_total"]
    assert stats["provenance"]["python_version"].startswith("3.")
    # Each target was asked for once per tier; generation rarely fails.
    assert stats["dropped"].get("generation_failed", 0) <= 0.05 * stats["in"]
    targets = table.column("target").to_pylist()
    assert len(set(targets)) >= 0.95 * len(grammar.targets())
    assert max(targets.count(t) for t in set(targets)) <= 3
    assert set(table.column("tier").to_pylist()) == {1, 3, 6}
    assert len(set(table.column("program_id").to_pylist())) == table.num_rows  # deduplicated
    assert table.schema.metadata[b"python_version"].startswith(b"3.")


def test_reserve_programs_come_last_flagged_from_the_second_tier_up(tmp_path: Path) -> None:
    out, stats = _run(tmp_path, "r", reserve_per_target=3)
    targets = load_grammar("grammars/python").targets()
    assert stats["in"] == 3 * len(targets) + 3 * len(targets)
    rows = read_table(out).to_pylist()
    flags = [row["reserve"] for row in rows]
    first = flags.index(True)
    assert not any(flags[:first]) and all(flags[first:])  # main programs first, then the reserves
    assert stats["reserve_programs"] == len(rows) - first
    # Of tiers [1, 3, 6]: a target's first two reserves in the second, its third in the next.
    for row in rows[first:]:
        assert row["tier"] == (3, 3, 6)[(row["index"] - 3 * len(targets)) // len(targets)]
    main, _ = _run(tmp_path, "m")
    assert read_table(main).to_pylist() == [{**row, "reserve": False} for row in rows[:first]]


def test_output_is_replaced_atomically_and_kept_on_bad_input(tmp_path: Path) -> None:
    out, _ = _run(tmp_path, "p")
    before = [p.read_bytes() for p in shard_paths(out)]
    with pytest.raises(UserError, match="grammar folder not found"):
        run_synthesize_stage(5, SynthesizeParams(grammars=[str(tmp_path / "nope")]), out, tmp_path / "s.json")
    assert [p.read_bytes() for p in shard_paths(out)] == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".p.")]  # no temp folder left


def test_adding_a_type_is_adding_a_file(tmp_path: Path) -> None:
    grammar_dir = tmp_path / "python"
    shutil.copytree("grammars/python", grammar_dir)
    shutil.copy(FIXTURES / "complex.yaml", grammar_dir / "complex.yaml")
    grammar = load_grammar(grammar_dir)
    assert "complex" in grammar.types and "complex.conjugate" in grammar.targets()

    params = SynthesizeParams(grammars=[str(grammar_dir)], tiers=[1, 2, 3])
    run_synthesize_stage(3, params, tmp_path / "programs", tmp_path / "s.json")
    programs = read_table(tmp_path / "programs").to_pylist()
    new_programs = [p for p in programs if p["target"].startswith("complex.")]
    assert len(new_programs) >= 8  # 4 operations × 3 tiers, a few may fail to generate
    assert any(json.loads(p["param_types"])[0][1] == "complex" for p in new_programs)

    # Their inputs are drawn from the new type's strategy and they run.
    only_new = tmp_path / "new_programs"
    from factory.contracts import PROGRAMS_SCHEMA
    from factory.io import ShardWriter

    with ShardWriter(only_new, PROGRAMS_SCHEMA) as w:
        w.write_many(new_programs)
    stats = run_inputs_stage(
        3,
        InputsParams(),
        ExecuteParams(),
        str(grammar_dir),
        only_new,
        tmp_path / "cases",
        tmp_path / "i.json",
    )
    cases = read_table(tmp_path / "cases").to_pylist()
    assert any("j" in c["args"] for c in cases)
    assert stats.to_dict()["candidate_status"].get("ok", 0) > 0
    assert isinstance(read_table(tmp_path / "cases"), pa.Table)
