"""Questions and tasks derived from traces (docs/design.md §5)."""

from factory.tasks.analysis import statement_lines
from factory.tasks.questions import line_text, questions_from_trace

__all__ = ["line_text", "questions_from_trace", "statement_lines"]
