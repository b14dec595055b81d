"""A real TRL GRPO run on the CPU: 2 steps, a tiny random Qwen2 model, a tokenizer trained here,
our items as a `datasets.Dataset`, and our reward functions called through TRL's own contract.

Needs the `train` extra (`pip install -e '.[train]'`); nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factory.rewards import trl as rewards
from factory.scoring import score_item

# Nothing may reach a hub: set before transformers / huggingface_hub / datasets are imported.
for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ITEM_COLUMNS = ("family", "source", "entry", "args", "questions", "tests")


def _wb(
    source: str, args: str, output: str, out_type: str, white_box: list[dict[str, Any]]
) -> dict[str, Any]:
    questions = [{"family": "output", "answer": output, "answer_type": out_type}, *white_box]
    return {
        "family": "white_box",
        "source": source,
        "entry": "f",
        "args": args,
        "questions": json.dumps(questions),
    }


def _nl(line: int, occurrence: int, answer: int) -> dict[str, Any]:
    return {"family": "next_line", "line": line, "occurrence": occurrence, "answer": answer}


def _st(line: int, occurrence: int, var: str, answer: str) -> dict[str, Any]:
    return {"family": "state", "line": line, "occurrence": occurrence, "var": var, "answer": answer}


EVENS = """\
def f(xs):
    total = 0
    for x in xs:
        if x % 2 == 0:
            total += x
    return total
"""
WORDS = """\
def f(s):
    words = s.split()
    out = []
    for w in words:
        out.append(w.upper())
    return '-'.join(out)
"""
FIB = """\
def f(n):
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    return a
"""
COUNT = """\
def f(d, key):
    if key in d:
        return d[key] * 2
    d[key] = 1
    return len(d)
"""
ORDER = """\
def f(t):
    x, y = t
    if x > y:
        x, y = y, x
    return (x, y, y - x)
"""

# (item, gold completion text): white-box items with a hand-traced gold, then output, input, codegen.
ITEMS: list[tuple[dict[str, Any], list[str] | str]] = [
    (
        _wb(
            EVENS,
            "[1, 2, 4]",
            "6",
            "int",
            [_nl(4, 1, 3), _nl(5, 2, 3), _st(5, 1, "total", "2; int"), _st(3, 3, "x", "4; int")],
        ),
        ["assert f([1, 2, 4]) == 6", "for x in xs:", "for x in xs:", "2; int", "4; int"],
    ),
    (
        _wb(
            WORDS,
            "'ab cd'",
            "'AB-CD'",
            "str",
            [_nl(3, 1, 4), _st(5, 1, "out", "['AB']; list"), _st(2, 1, "words", "['ab', 'cd']; list")],
        ),
        ["assert f('ab cd') == 'AB-CD'", "for w in words:", "['AB']; list", "['ab', 'cd']; list"],
    ),
    (
        _wb(FIB, "4", "3", "int", [_nl(3, 5, 6), _st(4, 2, "b", "2; int"), _st(5, 1, "n", "3; int")]),
        ["assert f(4) == 3", "return a", "2; int", "3; int"],
    ),
    (
        _wb(
            COUNT,
            "{'a': 2}, 'b'",
            "2",
            "int",
            [_nl(2, 1, 4), _nl(3, 1, -1), _st(4, 1, "d", "{'a': 2, 'b': 1}; dict")],
        ),
        ["assert f({'a': 2}, 'b') == 2", "d[key] = 1", "-1", "{'a': 2, 'b': 1}; dict"],
    ),
    (
        _wb(ORDER, "(5, 2)", "(2, 5, 3)", "tuple", [_nl(3, 1, 4), _st(4, 1, "x", "2; int")]),
        ["assert f((5, 2)) == (2, 5, 3)", "x, y = y, x", "2; int"],
    ),
    (
        {
            "family": "output",
            "source": "def f(xs):\n    return sorted(set(xs))[::-1]\n",
            "entry": "f",
            "args": "[3, 1, 3, 2]",
            "questions": json.dumps([{"family": "output", "answer": "[3, 2, 1]", "answer_type": "list"}]),
        },
        ["assert f([3, 1, 3, 2]) == [3, 2, 1]"],
    ),
    (
        {
            "family": "input",
            "source": FIB,
            "entry": "f",
            "args": "4",
            "questions": json.dumps([{"family": "input", "answer": "3", "answer_type": "int"}]),
        },
        ["assert f(4) == 3"],
    ),
    (
        {
            "family": "codegen",
            "entry": "is_palindrome",
            "tests": json.dumps(
                [
                    "assert is_palindrome('abba') is True",
                    "assert is_palindrome('abc') is False",
                    "assert is_palindrome('') is True",
                    "assert is_palindrome('A man a plan', ignore_case=True) is False",
                    "assert is_palindrome('Aba', ignore_case=True) is True",
                ]
            ),
        },
        "<answer>\n```python\ndef is_palindrome(s, ignore_case=False):\n"
        "    if ignore_case:\n        s = s.lower()\n    return s == s[::-1]\n```\n</answer>",
    ),
]


def _prompt(item: dict[str, Any]) -> str:
    if item["family"] == "codegen":
        tests = "\n".join(json.loads(item["tests"]))
        return f"Write `{item['entry']}` so that these tests pass:\n{tests}\nPut the code in <answer>."
    questions = json.loads(item["questions"])
    asks = []
    for q in questions:
        if q["family"] == "output":
            asks.append(f"Fill in: assert f({item['args']}) == ??")
        elif q["family"] == "input":
            asks.append(f"Fill in: assert f(??) == {q['answer']}")
        elif q["family"] == "next_line":
            asks.append(f"Which line runs after execution {q['occurrence']} of line {q['line']}?")
        else:
            asks.append(
                f"Value and type of {q['var']} after execution {q['occurrence']} of line {q['line']}?"
            )
    listed = "\n".join(f"{i}. {a}" for i, a in enumerate(asks, 1))
    return f"```python\n{item['source']}```\n{listed}\nAnswer in <answer>, one line each."


def _import_training() -> dict[str, Any]:
    try:
        import datasets
        import tokenizers
        import torch
        import transformers
        import trl
    except ImportError as exc:
        pytest.fail(
            f"the GRPO smoke test needs the train extra ({exc.name} is missing): "
            "run `.venv/bin/pip install -e '.[dev,train]'`",
            pytrace=False,
        )
    return {
        "datasets": datasets,
        "tokenizers": tokenizers,
        "torch": torch,
        "transformers": transformers,
        "trl": trl,
    }


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _tokenizer(libs: dict[str, Any], texts: list[str]) -> Any:
    """A byte-level BPE trained on the prompts here, wrapped for transformers."""
    tk = libs["tokenizers"]
    specials = ["<|pad|>", "<|end|>", "<|user|>", "<|assistant|>"]
    tokenizer = tk.Tokenizer(tk.models.BPE())
    tokenizer.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials, initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = libs["transformers"].PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<|pad|>", eos_token="<|end|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _probe(fn: Callable[..., list[Any]], calls: list[dict[str, Any]]) -> Callable[..., list[Any]]:
    """Wraps a reward function: asserts TRL's keyword contract from inside, records each call."""

    def probe(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[Any]:
        n = len(completions)
        assert n > 0 and len(prompts) == n and len(kwargs["completion_ids"]) == n
        for key in ITEM_COLUMNS:
            assert key in kwargs, f"column {key!r} did not reach the reward function"
            assert isinstance(kwargs[key], list) and len(kwargs[key]) == n, key
        assert all(isinstance(c, list) and c[-1]["role"] == "assistant" for c in completions)
        assert "trainer_state" in kwargs
        out = fn(prompts=prompts, completions=completions, **kwargs)
        assert len(out) == n
        assert all(r is None or (isinstance(r, float) and math.isfinite(r)) for r in out)
        calls.append({"name": probe.__name__, "families": list(kwargs["family"]), "rewards": out})
        return out

    probe.__name__ = fn.__name__
    return probe


def test_items_gold_answers_score_the_maximum():
    for item, gold in ITEMS:
        text = gold if isinstance(gold, str) else "<answer>\n" + "\n".join(gold) + "\n</answer>"
        expected = 2.0 if item["family"] == "white_box" else 1.0
        assert score_item(item, text).reward == expected, item


@pytest.mark.slow
def test_grpo_trains_two_steps_with_our_reward_functions(tmp_path: Path):
    libs = _import_training()
    torch, transformers, trl = libs["torch"], libs["transformers"], libs["trl"]
    torch.manual_seed(0)
    torch.set_num_threads(2)

    rows = []
    for item, _gold in ITEMS:
        row = {key: item.get(key) for key in ITEM_COLUMNS}
        row["prompt"] = [{"role": "user", "content": _prompt(item)}]
        rows.append(row)
    dataset = libs["datasets"].Dataset.from_list(rows)
    tokenizer = _tokenizer(libs, [r["prompt"][0]["content"] for r in rows])

    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = transformers.Qwen2ForCausalLM(config)

    calls: list[dict[str, Any]] = []
    funcs = [
        rewards.make_white_box_reward(alpha=0.5),
        rewards.input_reward,
        rewards.codegen_reward,
        rewards.format_reward,
    ]
    names = [fn.__name__ for fn in funcs]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=16,  # 8 prompts x 2 generations: every family in every batch
        num_generations=2,
        max_completion_length=24,
        learning_rate=1e-4,
        use_cpu=True,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[_probe(fn, calls) for fn in funcs],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    result = trainer.train()

    assert trainer.state.global_step == 2
    assert math.isfinite(result.training_loss)
    assert len(calls) == 2 * len(funcs)  # each function once per step
    for call in calls:
        assert sorted(set(call["families"])) == ["codegen", "input", "output", "white_box"]
    judged = {c["name"]: [r for r in c["rewards"] if r is not None] for c in calls}
    assert len(judged["white_box_reward"]) == 12 and len(judged["input_reward"]) == 2
    assert len(judged["codegen_reward"]) == 2 and len(judged["format_reward"]) == 16

    logs = [entry for entry in trainer.state.log_history if any(k.startswith("rewards/") for k in entry)]
    assert len(logs) == 2
    for entry in logs:
        for name in names:
            value = entry[f"rewards/{name}/mean"]
            assert isinstance(value, float) and math.isfinite(value), (name, entry)
        assert math.isfinite(entry["reward"])
        assert "scoring/white_box/r_io" in entry and "scoring/codegen/reward" in entry
