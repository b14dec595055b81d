"""``threadsafe_ast.parse`` from many threads while finalizers run: never the SystemError that
plain ``ast.parse`` gives there on CPython 3.11 (the scorer's thread pool hit it in CI)."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

from factory import threadsafe_ast

SOURCE = f"assert f(65, 32) == ({list(range(300))!r}, {[str(i) for i in range(100)]!r})"


class _Finalized:
    def __del__(self) -> None:
        [i for i in range(50)]  # Python code run by a collection, in the middle of a parse


def _errors_under_contention(parse: Callable[[str], Any], threads: int = 8, rounds: int = 300) -> int:
    """How many threads failed with a SystemError, each parsing ``rounds`` times while making
    garbage cycles with finalizers (collections then run Python code mid-parse)."""
    failed: list[SystemError] = []

    def work() -> None:
        for _ in range(rounds):
            a, b = _Finalized(), _Finalized()
            a.other, b.other = b, a  # type: ignore[attr-defined]
            del a, b
            try:
                parse(SOURCE)
            except SystemError as exc:
                failed.append(exc)
                return

    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(50, 5, 5)
    try:
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
    return len(failed)


def test_parses_from_many_threads_never_collide() -> None:
    assert _errors_under_contention(threadsafe_ast.parse) == 0
    if sys.version_info[:2] == (3, 11):  # the hazard is real here: plain ast.parse collides
        assert _errors_under_contention(ast.parse) > 0


def test_it_parses_as_ast_parse_does() -> None:
    assert ast.dump(threadsafe_ast.parse("x = [1, 2]")) == ast.dump(ast.parse("x = [1, 2]"))
    assert isinstance(threadsafe_ast.parse("1 + 2", mode="eval"), ast.Expression)
