"""Python's ``analysis`` facet: statement analysis with ``ast`` (``factory.tasks.analysis``)."""

from factory.tasks.analysis import has_multiline_statement, program_features, statement_info

__all__ = ["has_multiline_statement", "program_features", "statement_info"]
