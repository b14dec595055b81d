"""The embedded models (``factory/solvers/embedded``): the GGUF assembled from its wheels and
checked against its sha256, clear errors when a part is missing or corrupted, and the real
Qwen2.5-Coder-0.5B-Instruct converted once and loaded offline."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from factory.errors import UserError
from factory.solvers import embedded
from factory.solvers.embedded import EMBEDDED, MODELS, assemble, embedded_model, ensure_converted, gguf_path


def test_parts_are_concatenated_in_order_and_checked(tmp_path: Path) -> None:
    parts = []
    for i, content in enumerate((b"GGUF" + b"a" * 5000, b"b" * 7000, b"c" * 3)):
        parts.append(tmp_path / f"part{i}.bin")
        parts[-1].write_bytes(content)
    whole = b"".join(p.read_bytes() for p in parts)
    target = tmp_path / "cache" / "model.gguf"
    assert assemble(parts, target, hashlib.sha256(whole).hexdigest(), "hint") == target
    assert target.read_bytes() == whole


def test_a_corrupted_part_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    parts = [tmp_path / "a.bin", tmp_path / "b.bin"]
    parts[0].write_bytes(b"x" * 100)
    parts[1].write_bytes(b"y" * 100)
    expected = hashlib.sha256(b"x" * 100 + b"y" * 100).hexdigest()
    parts[1].write_bytes(b"y" * 99 + b"z")  # one byte flipped
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(UserError, match="do not make the expected file .* reinstall them, hint"):
        assemble(parts, target, expected, "hint")
    assert list(target.parent.iterdir()) == [], "no partial or temporary file is left"


def test_a_missing_part_names_the_wheel_to_install() -> None:
    model = dataclasses.replace(MODELS[EMBEDDED], parts=(("execverify_no_such_part_7", "data/part07.bin"),))
    with pytest.raises(UserError, match="needs the wheel execverify-no-such-part-7: pip install"):
        gguf_path(model)


def test_names() -> None:
    assert embedded_model(None) is embedded_model("") is MODELS[EMBEDDED]
    assert embedded_model("smollm2") is MODELS["smollm2"]
    assert embedded_model("Qwen/Qwen2.5-Coder-0.5B-Instruct") is None  # a Hub id: not embedded
    with pytest.raises(UserError, match="no embedded model called 'gpt'"):
        ensure_converted("gpt")


@pytest.mark.slow
def test_the_real_qwen_model_assembles_checks_converts_and_answers_offline(monkeypatch) -> None:
    """From the six installed wheels: the GGUF (491,400,064 bytes, its sha256 checked while it is
    assembled), converted once (about 70 s and 3.8 GB of memory the first time on 2 cores;
    cached after), then loaded offline and asked one short question greedily."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    model = MODELS[EMBEDDED]
    gguf = gguf_path(model)
    assert gguf.stat().st_size == model.size
    folder = ensure_converted(EMBEDDED)
    assert folder == embedded.converted_dir(model, gguf)
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "qwen2" and config["num_hidden_layers"] == 24
    from factory.solvers.transformers_backend import TransformersSolver

    solver = TransformersSolver(EMBEDDED, device="cpu", batch_size=1, threads=1)
    assert solver.model_id == model.model_id
    (answer,) = solver.generate(["Complete: assert 1 + 1 == "], 1, 0.0, 1.0, 16, 0)[0]
    assert "2" in answer, answer  # a code model, not an echo of the prompt
