"""Python's ``analysis`` facet: statement analysis with ``ast`` (``factory.tasks.analysis``) and
statement removal (``factory.languages.python.ablation``)."""

from factory.languages.python.ablation import (
    branch_tests,
    negated_tests,
    once_variants,
    passthrough_variants,
    removal_variants,
)
from factory.tasks.analysis import has_multiline_statement, program_features, statement_info

__all__ = [
    "branch_tests",
    "has_multiline_statement",
    "negated_tests",
    "once_variants",
    "passthrough_variants",
    "program_features",
    "removal_variants",
    "statement_info",
]
