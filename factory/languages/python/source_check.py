"""Python's ``source_check`` facet: where a program's source does not compile (the one-program
commands check a file with it)."""

from __future__ import annotations


def syntax_error(source: str) -> tuple[int, str] | None:
    """(line, message) of the syntax error ``compile`` finds in ``source``; None when it compiles."""
    try:
        compile(source, "<program>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.msg
    except ValueError as exc:  # a NUL byte
        return 1, str(exc)
    return None
