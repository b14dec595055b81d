"""Reading a completion: its text, the last ``<answer>`` block, the answer lines, the code.

Tolerant of form, strict about meaning:
- the last ``<answer>...</answer>`` block counts (tags case-insensitive); a final ``<answer>``
  without its closing tag (a stop string cut it off) runs to the end of the text, less a closing
  tag cut short on the last line (``</answer`` with no ``>``: measured in 2 of 14 unparsed answers
  of the embedded model on CRUXEval-O);
- blank lines and code-fence lines (```` ``` ````, ```` ```python ````) are dropped, each line is
  stripped, and one pair of backticks around a whole line is removed;
- trailing periods are *not* stripped here (``1.`` is a float); the judges that can tell a
  sentence's period from the answer's meaning (next_line, state, coverage) handle it;
- numbering is not removed line by line (``- 1`` or ``1. 5`` could be answers in their own
  right); only when the block's n lines (n > 1) are numbered ``1. `` to ``n. ``, in order, as the
  prompt of an item of several questions asks, are those numbers dropped (``split_answers``). The
  count stays exact: numbered or not, one line per question.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

_OPEN_RE = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_RE = re.compile(r"</answer>", re.IGNORECASE)
_CUT_CLOSE_RE = re.compile(r"\n[^\S\n]*</a(?:n(?:s(?:w(?:e(?:r)?)?)?)?)?[^\S\n]*\Z", re.IGNORECASE)
_FENCE_LINE_RE = re.compile(r"^\s*```[\w+-]*\s*$")
_FENCE_RE = re.compile(r"```([\w+-]*)[^\S\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_NUMBER_RE = re.compile(r"(\d+)\.\s")
_PYTHON_TAGS = frozenset({"python", "py", "python3"})


def completion_text(completion: str | Sequence[Mapping[str, Any]] | None) -> str:
    """The text to judge: a plain string, or the last assistant message of a conversation.

    Message content may be a string or a list of parts (``{"type": "text", "text": ...}``).
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    for message in reversed(list(completion)):
        if not isinstance(message, Mapping):
            continue
        if message.get("role", "assistant") != "assistant":
            continue
        return _content_text(message.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return str(content)


def answer_block(text: str) -> str | None:
    """The content of the last ``<answer>`` block, or None when there is none."""
    last_open = None
    for m in _OPEN_RE.finditer(text):
        last_open = m
    if last_open is None:
        return None
    close = _CLOSE_RE.search(text, last_open.end())
    if close is not None:
        return text[last_open.end() : close.start()]
    block = text[last_open.end() :]
    cut = _CUT_CLOSE_RE.search(block)
    return block[: cut.start()] if cut else block


def answer_lines(block: str) -> list[str]:
    """The non-empty answer lines of a block, stripped, fences and wrapping backticks removed."""
    lines = []
    for raw in block.splitlines():
        if _FENCE_LINE_RE.match(raw):
            continue
        line = raw.strip()
        for tick in ("```", "`"):
            if len(line) > 2 * len(tick) and line.startswith(tick) and line.endswith(tick):
                line = line[len(tick) : -len(tick)].strip()
                break
        if line:
            lines.append(line)
    return lines


def split_answers(text: str, n_questions: int) -> list[str] | None:
    """Exactly ``n_questions`` answer lines from the last answer block, else None.

    None when there is no block, or when the block has fewer or more non-empty lines than there
    are questions (a known exploit: one line per question, no more, no less).
    """
    block = answer_block(text)
    if block is None:
        return None
    lines = answer_lines(block)
    if len(lines) != n_questions:
        return None
    return unnumbered(lines)


def unnumbered(lines: list[str]) -> list[str]:
    """The lines without their question numbers when they are numbered ``1. `` to ``n. `` in
    order (the prompt of a several-question item asks for that); else the lines as they are."""
    if len(lines) < 2:
        return lines
    stripped = []
    for number, line in enumerate(lines, 1):
        match = _NUMBER_RE.match(line)
        if match is None or int(match.group(1)) != number:
            return lines
        stripped.append(line[match.end() :].strip())
    return stripped


def extract_code(text: str, tags: Collection[str] = _PYTHON_TAGS) -> str:
    """The code of a code-generation completion; ``tags``: the fence tags of the item's language
    (``python``, ``py``, ``python3`` by default; its ``codegen`` facet's ``FENCE_TAGS``).

    In order: the last fence of the language's tags (```` ```python ````) inside the last answer
    block; the last fence of any kind inside it; the block itself (when it is not blank); the
    last fence of the language's tags anywhere; the last fence anywhere; the whole text.
    """
    block = answer_block(text)
    if block is not None:
        code = _last_fence(block, tags) or _last_fence(block, None)
        if code is not None:
            return code
        if block.strip():
            return _dedent_block(block)
    code = _last_fence(text, tags) or _last_fence(text, None)
    return code if code is not None else text


def _last_fence(text: str, tags: Collection[str] | None) -> str | None:
    """The last fence's code, of one of ``tags`` (any fence when None)."""
    found = None
    for m in _FENCE_RE.finditer(text):
        if tags is not None and m.group(1).lower() not in tags:
            continue
        found = m.group(2)
    return found


def _dedent_block(block: str) -> str:
    import textwrap

    return textwrap.dedent(block.strip("\n"))
